package adminapi

import (
	"context"
	"time"

	"github.com/lectern/lectern/storage"
)

const kindEvent kind = "event"

func toEvent(e *storage.Event) Event {
	return Event{Id: e.ID, Slug: e.Slug, Title: e.Title, Description: e.Description, Location: e.Location,
		StartsAt: e.StartsAt, EndsAt: e.EndsAt, PriceCents: e.PriceCents, Currency: e.Currency, Capacity: e.Capacity,
		Public: e.Public, Status: PublicationStatus(e.Status), CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt}
}

func validateEvent(e *storage.Event) error {
	var f fields
	f.slug("slug", e.Slug)
	f.text("title", e.Title, 1, 300, false)
	f.text("description", e.Description, 0, 20000, true)
	f.text("location", e.Location, 0, 300, false)
	if !e.EndsAt.After(e.StartsAt) {
		f.add("endsAt", "must be after startsAt")
	}
	f.nonNegative("priceCents", e.PriceCents)
	f.currency("currency", e.Currency)
	f.nonNegative("capacity", int64(e.Capacity))
	f.status("status", e.Status)
	return f.err()
}

var events = resource[storage.Event, Event]{kind: kindEvent, records: Store.EventRecords,
	view: toEvent, validate: validateEvent, unique: "slug",
	inUse: refuseIfUsed[storage.Event](Store.EventRegistrationRecords, "EventID", "people registered for this event; unpublish it instead")}

// ListEvents implements GET /events (events:read): every event, drafts and
// non-public ones included.
func (h *Handler) ListEvents(ctx context.Context, req ListEventsRequestObject) (ListEventsResponseObject, error) {
	return list[ListEvents200JSONResponse](ctx, h, events, req.Params.Cursor, req.Params.Limit)
}

// defaultEventLength is an event's length when endsAt is left out.
const defaultEventLength = time.Hour

// CreateEvent implements POST /events (events:write).
func (h *Handler) CreateEvent(ctx context.Context, req CreateEventRequestObject) (CreateEventResponseObject, error) {
	b := req.Body
	e, err := events.create(ctx, h, &storage.Event{Slug: b.Slug, Title: b.Title, Description: orDefault(b.Description, ""),
		Location: orDefault(b.Location, ""), StartsAt: b.StartsAt, EndsAt: orDefault(b.EndsAt, b.StartsAt.Add(defaultEventLength)), PriceCents: orDefault(b.PriceCents, 0),
		Currency: orDefault(b.Currency, "USD"), Capacity: orDefault(b.Capacity, 0), Public: orDefault(b.Public, true),
		Status: string(orDefault(b.Status, PublicationStatusDraft))})
	return CreateEvent201JSONResponse(e), err
}

// GetEvent implements GET /events/{eventId} (events:read).
func (h *Handler) GetEvent(ctx context.Context, req GetEventRequestObject) (GetEventResponseObject, error) {
	e, err := events.get(ctx, h, req.EventId)
	return GetEvent200JSONResponse(e), err
}

// UpdateEvent implements PATCH /events/{eventId} (events:write).
func (h *Handler) UpdateEvent(ctx context.Context, req UpdateEventRequestObject) (UpdateEventResponseObject, error) {
	b := req.Body
	e, err := events.change(ctx, h, req.EventId, func(e *storage.Event) {
		set(&e.Slug, b.Slug)
		set(&e.Title, b.Title)
		set(&e.Description, b.Description)
		set(&e.Location, b.Location)
		set(&e.StartsAt, b.StartsAt)
		set(&e.EndsAt, b.EndsAt)
		set(&e.PriceCents, b.PriceCents)
		set(&e.Currency, b.Currency)
		set(&e.Capacity, b.Capacity)
		set(&e.Public, b.Public)
		setAs(&e.Status, b.Status)
	})
	return UpdateEvent200JSONResponse(e), err
}

// DeleteEvent implements DELETE /events/{eventId} (events:write): an event
// people registered for stays (unpublish it instead).
func (h *Handler) DeleteEvent(ctx context.Context, req DeleteEventRequestObject) (DeleteEventResponseObject, error) {
	_, err := events.delete(ctx, h, req.EventId)
	return DeleteEvent204Response{}, err
}
