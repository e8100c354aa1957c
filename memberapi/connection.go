package memberapi

import (
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/lectern/lectern/storage"
)

// Page sizes (DESIGN §10): first defaults to 20 and may not exceed 100;
// larger, zero and negative values are errors, not clamped.
const (
	DefaultPageSize = 20
	MaxPageSize     = 100
)

// Cursor kinds: a cursor names the connection it belongs to, so that one
// connection's cursor is refused by another.
const (
	kindEnrollment   = "enrollment"
	kindProduct      = "digital-product"
	kindConsulting   = "consulting-service"
	kindRegistration = "event-registration"
	kindNotification = "notification"
	kindSubscription = "notification-subscription"
)

// pageArgs are the arguments of every connection field.
type pageArgs struct {
	First *int32
	After *string
}

// encodeCursor makes the opaque cursor of a row: base64url("kind:id").
// The row ID is the keyset position (storage.Page.After); it reveals
// nothing the node's own id does not.
func encodeCursor(kind string, id int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(kind + ":" + strconv.FormatInt(id, 10)))
}

// decodeCursor returns the row ID of a cursor of kind. Anything else (not
// base64url, another connection's kind, a non-canonical or non-positive
// ID) is an error: a client can only pass back cursors it was given.
func decodeCursor(kind, cursor string) (int64, bool) {
	if len(cursor) == 0 || len(cursor) > 64 {
		return 0, false
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(cursor)
	if err != nil {
		return 0, false
	}
	k, num, ok := strings.Cut(string(raw), ":")
	if !ok || k != kind {
		return 0, false
	}
	id, err := strconv.ParseInt(num, 10, 64)
	if err != nil || id <= 0 || strconv.FormatInt(id, 10) != num {
		return 0, false
	}
	return id, true
}

// first returns the page size the arguments ask for.
func (a pageArgs) first() (int, error) {
	if a.First == nil {
		return DefaultPageSize, nil
	}
	first := int(*a.First)
	if first < 1 || first > MaxPageSize {
		return 0, badInput("first must be between 1 and %d (got %d)", MaxPageSize, first)
	}
	return first, nil
}

// page turns a connection's arguments into the storage page to ask for:
// one row more than first, so that hasNextPage needs no second query.
func (a pageArgs) page(kind string) (storage.Page, int, error) {
	first, err := a.first()
	if err != nil {
		return storage.Page{}, 0, err
	}
	p := storage.Page{Limit: first + 1}
	if a.After != nil {
		id, ok := decodeCursor(kind, *a.After)
		if !ok {
			return storage.Page{}, 0, badInput("after is not a cursor of this connection")
		}
		p.After = id
	}
	return p, first, nil
}

// connection is one page of a connection: its nodes, whether more follow,
// and how many there are in all.
type connection[N any] struct {
	nodes     []N
	total     int
	hasNext   bool
	endCursor *string
}

// newConnection builds the page from the rows storage returned for
// page(): at most first+1 rows, the extra one meaning there is a next page.
func newConnection[R, N any](kind string, rows []R, total, first int, id func(*R) int64, node func(*R) N) *connection[N] {
	return newConnectionBy(rows, total, first, func(r *R) string { return encodeCursor(kind, id(r)) }, node)
}

// newConnectionBy is newConnection for rows whose keyset position is not
// an ID: cursor makes the opaque cursor of a row.
func newConnectionBy[R, N any](rows []R, total, first int, cursor func(*R) string, node func(*R) N) *connection[N] {
	c := &connection[N]{total: total}
	if len(rows) > first {
		rows, c.hasNext = rows[:first], true
	}
	c.nodes = make([]N, len(rows))
	for i := range rows {
		c.nodes[i] = node(&rows[i])
	}
	if n := len(rows); n > 0 {
		cur := cursor(&rows[n-1])
		c.endCursor = &cur
	}
	return c
}

func (c *connection[N]) Nodes() []N          { return c.nodes }
func (c *connection[N]) TotalCount() int32   { return clampInt32(c.total) }
func (c *connection[N]) PageInfo() *pageInfo { return &pageInfo{c.hasNext, c.endCursor} }

type pageInfo struct {
	hasNext   bool
	endCursor *string
}

func (p *pageInfo) HasNextPage() bool  { return p.hasNext }
func (p *pageInfo) EndCursor() *string { return p.endCursor }

// clampInt32 fits a count into GraphQL's Int (32-bit).
func clampInt32(n int) int32 {
	const maxInt32 = 1<<31 - 1
	if n > maxInt32 {
		return maxInt32
	}
	return int32(n)
}
