package mcp

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"time"

	"github.com/lectern/lectern/authserver/scope"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
	"github.com/lectern/lectern/vocab"
)

// tools holds what the tool handlers share. A handler finds the site and
// the caller in its context (the request's), never in the server: one
// server serves every caller with the same tool set.
type tools struct {
	store  Store
	now    func() time.Time
	logger *slog.Logger
}

// Errors a model sees as tool errors (isError results), worded so that it
// can recover.
var (
	errNoSite      = errors.New("this request reached no site")
	errUnavailable = errors.New("the site's data is temporarily unavailable; try again shortly")
	errBadCursor   = errors.New("cursor is not one this tool returned; start again without cursor")
)

// site returns the request's site.
func (t *tools) site(ctx context.Context) (*tenant.Site, error) {
	site, ok := tenant.FromContext(ctx)
	if !ok {
		return nil, errNoSite
	}
	return site, nil
}

// person returns the site and the signed-in person for a tool that needs
// scopes. The handler's server has the tool only for callers with them;
// this checks again so that a wiring mistake cannot serve one person's data
// to another.
func (t *tools) person(ctx context.Context, scopes ...string) (*tenant.Site, string, error) {
	site, err := t.site(ctx)
	if err != nil {
		return nil, "", err
	}
	c, ok := callerFrom(ctx)
	if !ok || c.token == nil || c.token.Site != site.ID || !c.granted(scopes...) {
		return nil, "", errors.New("this tool needs an access token with scope " + scope.Join(scopes))
	}
	return site, c.token.Subject, nil
}

// fail turns a storage error into the tool error a model sees; the cause
// goes to the log only.
func (t *tools) fail(ctx context.Context, tool string, err error) error {
	t.logger.ErrorContext(ctx, "mcp tool", "tool", tool, "err", err)
	return errUnavailable
}

// pageLimit is the page size of a list tool: the schema bounds it already;
// this keeps the bound if a caller gets around the schema.
func pageLimit(n int) int {
	switch {
	case n <= 0:
		return DefaultPageSize
	case n > MaxPageSize:
		return MaxPageSize
	}
	return n
}

// Cursors are the storage keyset position (an ID, or for students an
// offset) as decimal text. They are opaque to clients.
func decodeCursor(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, errBadCursor
	}
	return n, nil
}

func encodeCursor(n int64) string { return strconv.FormatInt(n, 10) }

// page asks storage for one row more than limit, so that whether another
// page exists is known exactly.
func page(after int64, limit int) storage.Page {
	return storage.Page{After: after, Limit: limit + 1}
}

// listed is one page of a list tool's answer.
type listed[O any] struct {
	items []O    // never nil: an empty page is [] in the answer
	next  string // the next page's cursor; "" on the last page
	total int
}

// pageOf runs the page of a list tool that in asks for: it reads the
// cursor and the page size, then fetches.
func pageOf[T, O any](ctx context.Context, t *tools, tool string, in PageInput, key func(*T) int64,
	list func(storage.Page) ([]T, int, error), conv func(*T) O) (listed[O], error) {
	after, err := decodeCursor(in.Cursor)
	if err != nil {
		return listed[O]{}, err
	}
	return fetch(ctx, t, tool, after, pageLimit(in.Limit), key, list, conv)
}

// fetch asks list for the page after `after` (see page), cuts it to limit
// and converts its rows. A row's cursor is key(row); with key nil the list
// is not in ID order (students, by e-mail) and cursors are offsets. A
// storage failure is logged as tool's and answered as errUnavailable;
// errBadCursor from list passes through.
func fetch[T, O any](ctx context.Context, t *tools, tool string, after int64, limit int, key func(*T) int64,
	list func(storage.Page) ([]T, int, error), conv func(*T) O) (listed[O], error) {
	rows, total, err := list(page(after, limit))
	if errors.Is(err, errBadCursor) {
		return listed[O]{}, err
	}
	if err != nil {
		return listed[O]{}, t.fail(ctx, tool, err)
	}
	out := listed[O]{total: total}
	if len(rows) > limit {
		rows = rows[:limit]
		if key == nil {
			out.next = encodeCursor(after + int64(limit))
		} else {
			out.next = encodeCursor(key(&rows[limit-1]))
		}
	}
	out.items = make([]O, len(rows))
	for i := range rows {
		out.items[i] = conv(&rows[i])
	}
	return out, nil
}

// operatorPage is pageOf for an operator tool: the caller needs the scope
// need at the request's site.
func operatorPage[T, O any](ctx context.Context, t *tools, tool, need string, in PageInput, key func(*T) int64,
	list func(site tenant.ID, p storage.Page) ([]T, int, error), conv func(*T) O) (listed[O], error) {
	site, _, err := t.person(ctx, need)
	if err != nil {
		return listed[O]{}, err
	}
	return pageOf(ctx, t, tool, in, key, func(p storage.Page) ([]T, int, error) { return list(site.ID, p) }, conv)
}

// asIs is the conversion of a tool that works on the rows themselves.
func asIs[T any](row *T) T { return *row }

func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func optTime(t *time.Time) string {
	if t == nil {
		return ""
	}
	return rfc3339(*t)
}

func price(cents int64, currency string) Money {
	return Money{PriceCents: cents, Currency: currency, Price: vocab.Price(cents, currency)}
}

func courseSummary(site *tenant.Site, c *storage.Course) CourseSummary {
	return CourseSummary{
		Slug: c.Slug, Title: c.Title, Subtitle: c.Subtitle, Category: c.Category,
		Money: price(c.PriceCents, c.Currency), URL: site.URL(vocab.CourseMDPath(c.Slug)),
	}
}

func eventOutput(e *storage.Event) EventOutput {
	return EventOutput{
		Slug: e.Slug, Title: e.Title, Description: e.Description, Location: e.Location,
		StartsAt: rfc3339(e.StartsAt), EndsAt: rfc3339(e.EndsAt), Capacity: e.Capacity,
		Money: price(e.PriceCents, e.Currency),
	}
}

func notificationOutput(n *storage.Notification) NotificationOutput {
	return NotificationOutput{
		ID: n.ID, Kind: n.Kind, Title: n.Title, Body: n.Body, URL: n.URL,
		CreatedAt: rfc3339(n.CreatedAt), Read: n.ReadAt != nil, ReadAt: optTime(n.ReadAt),
	}
}
