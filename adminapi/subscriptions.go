package adminapi

import (
	"context"
	"errors"

	"github.com/lectern/lectern/storage"
)

const kindSubscription kind = "subscription"

func toSubscription(s *storage.Subscription) Subscription {
	return Subscription{Id: s.ID, UserId: s.UserID, PlanId: s.PlanID, Status: SubscriptionStatus(s.Status), StartedAt: s.StartedAt,
		CurrentPeriodEnd: s.CurrentPeriodEnd, CancelAtPeriodEnd: s.CancelAtPeriodEnd, CanceledAt: s.CanceledAt}
}

var subscriptions = resource[storage.Subscription, Subscription]{kind: kindSubscription, records: Store.SubscriptionRecords, view: toSubscription}

// ListSubscriptions implements GET /subscriptions (subscriptions:read).
func (h *Handler) ListSubscriptions(ctx context.Context, req ListSubscriptionsRequestObject) (ListSubscriptionsResponseObject, error) {
	var match []storage.Match
	if st := req.Params.Status; st != nil {
		if !st.Valid() {
			return nil, errBadRequest("unknown status", InvalidField{Field: "status", Message: "must be active, past_due or canceled"})
		}
		match = append(match, storage.Match{Field: "Status", Value: string(*st)})
	}
	return list[ListSubscriptions200JSONResponse](ctx, h, subscriptions, req.Params.Cursor, req.Params.Limit, match...)
}

// CreateSubscription implements POST /subscriptions (subscriptions:write):
// a complimentary subscription, active until currentPeriodEnd.
func (h *Handler) CreateSubscription(ctx context.Context, req CreateSubscriptionRequestObject) (CreateSubscriptionResponseObject, error) {
	b := req.Body
	u, err := h.personByEmail(ctx, "email", string(b.Email))
	if err != nil {
		return nil, err
	}
	if _, err := h.store.MembershipPlanRecords().Get(ctx, siteOf(ctx), b.PlanId); errors.Is(err, storage.ErrNotFound) {
		return nil, invalidField("planId", "no membership plan with this id at this site")
	} else if err != nil {
		return nil, err
	}
	now := h.now().UTC()
	if !b.CurrentPeriodEnd.After(now) {
		return nil, invalidField("currentPeriodEnd", "must be in the future")
	}
	s, err := subscriptions.create(ctx, h, &storage.Subscription{UserID: u.ID, PlanID: b.PlanId, Status: storage.SubscriptionActive,
		StartedAt: now, CurrentPeriodEnd: b.CurrentPeriodEnd})
	return CreateSubscription201JSONResponse(s), err
}

// GetSubscription implements GET /subscriptions/{subscriptionId}
// (subscriptions:read).
func (h *Handler) GetSubscription(ctx context.Context, req GetSubscriptionRequestObject) (GetSubscriptionResponseObject, error) {
	s, err := subscriptions.get(ctx, h, req.SubscriptionId)
	return GetSubscription200JSONResponse(s), err
}

// CancelSubscription implements POST /subscriptions/{subscriptionId}/cancel
// (subscriptions:write): now, or at the end of the paid period.
func (h *Handler) CancelSubscription(ctx context.Context, req CancelSubscriptionRequestObject) (CancelSubscriptionResponseObject, error) {
	atEnd := req.Body != nil && orDefault(req.Body.AtPeriodEnd, false)
	s, err := subscriptions.row(ctx, h, req.SubscriptionId)
	if err != nil {
		return nil, err
	}
	if s.Status == storage.SubscriptionCanceled {
		return nil, errConflict("the subscription is canceled already")
	}
	if atEnd {
		s.CancelAtPeriodEnd = true
	} else {
		s.Status, s.CanceledAt = storage.SubscriptionCanceled, ptr(h.now().UTC())
	}
	if err := h.store.SubscriptionRecords().Update(ctx, siteOf(ctx), s); err != nil {
		return nil, err
	}
	h.audit(ctx, "subscription.canceled", kindSubscription.target(s.ID), map[string]any{"at_period_end": atEnd})
	return CancelSubscription200JSONResponse(toSubscription(s)), nil
}
