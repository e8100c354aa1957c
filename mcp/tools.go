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

// trim cuts rows to limit and returns the cursor of the next page ("" on
// the last page); key gives a row's cursor.
func trim[T any](rows []T, limit int, key func(T) int64) ([]T, string) {
	if len(rows) <= limit {
		return rows, ""
	}
	rows = rows[:limit]
	return rows, encodeCursor(key(rows[limit-1]))
}

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
