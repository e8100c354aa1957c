package adminapi

import (
	"context"
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/lectern/lectern/storage"
)

// Page sizes (DESIGN §10: default 20, maximum 100; a larger limit is an
// error, not a silent clamp).
const (
	defaultLimit = 20
	maxLimit     = 100
)

// cursorPrefix versions the cursor format. Cursors are opaque to clients:
// base64url of "c1:<position>", where the position is the last ID of the
// page for keyset lists and the offset for lists ordered by e-mail.
const cursorPrefix = "c1:"

func encodeCursor(pos int64) *string {
	s := base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + strconv.FormatInt(pos, 10)))
	return &s
}

func decodeCursor(s string) (int64, error) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err == nil && strings.HasPrefix(string(raw), cursorPrefix) {
		if n, err := strconv.ParseInt(strings.TrimPrefix(string(raw), cursorPrefix), 10, 64); err == nil && n >= 0 {
			return n, nil
		}
	}
	return 0, errBadRequest("the cursor is not one this API gave out", InvalidField{Field: "cursor", Message: "is not a cursor of this list"})
}

// pageOf reads the cursor and limit parameters.
func pageOf(cursor *string, limit *int) (storage.Page, error) {
	p := storage.Page{Limit: defaultLimit}
	if limit != nil {
		if *limit < 1 || *limit > maxLimit {
			return p, errBadRequest("limit must be between 1 and 100", InvalidField{Field: "limit", Message: "must be between 1 and 100"})
		}
		p.Limit = *limit
	}
	if cursor != nil && *cursor != "" {
		after, err := decodeCursor(*cursor)
		if err != nil {
			return p, err
		}
		p.After = after
	}
	return p, nil
}

// listPage is one page of a list, converted for the API.
type listPage[O any] struct {
	items []O
	next  *string
	total int
}

// keysetPage lists one page of records in ID order. It asks for one row
// more than the page holds to know whether another page follows.
func keysetPage[T, O any](ctx context.Context, recs storage.Records[T], cursor *string, limit *int, conv func(*T) O, match ...storage.Match) (listPage[O], error) {
	p, err := pageOf(cursor, limit)
	if err != nil {
		return listPage[O]{}, err
	}
	n := p.Limit
	p.Limit++
	rows, total, err := recs.List(ctx, siteOf(ctx), p, match...)
	if err != nil {
		return listPage[O]{}, err
	}
	out := listPage[O]{items: make([]O, 0, min(len(rows), n)), total: total}
	for i := range rows {
		if i == n {
			out.next = encodeCursor(idOf(&rows[i-1]))
			break
		}
		out.items = append(out.items, conv(&rows[i]))
	}
	return out, nil
}

// offsetNext is the cursor after a page of an offset-paged list.
func offsetNext(p storage.Page, got, total int) *string {
	if end := p.After + int64(got); got > 0 && end < int64(total) {
		return encodeCursor(end)
	}
	return nil
}
