package adminapi

import (
	"errors"
	"net/http"
	"testing"

	"github.com/lectern/lectern/storage"
)

func TestCursorsRoundTrip(t *testing.T) {
	for _, n := range []int64{0, 1, 20, 1 << 40} {
		c := encodeCursor(n)
		got, err := decodeCursor(*c)
		if err != nil || got != n {
			t.Fatalf("cursor of %d decodes to %d, %v", n, got, err)
		}
	}
}

func TestBadCursorsAndLimitsAre400(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cursor *string
		limit  *int
		field  string
	}{
		{"not base64", ptr("%%%"), nil, "cursor"},
		{"not ours", ptr("aGVsbG8"), nil, "cursor"},
		{"negative position", encodeCursor(-1), nil, "cursor"},
		{"limit 0", nil, ptr(0), "limit"},
		{"limit 101", nil, ptr(101), "limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := pageOf(tc.cursor, tc.limit)
			var p *problem
			if !errors.As(err, &p) || p.Status != http.StatusBadRequest || len(p.Fields) != 1 || p.Fields[0].Field != tc.field {
				t.Fatalf("pageOf: %v; want 400 naming %s", err, tc.field)
			}
		})
	}
	p, err := pageOf(nil, nil)
	if err != nil || p != (storage.Page{Limit: defaultLimit}) {
		t.Fatalf("defaults: %+v, %v", p, err)
	}
	p, err = pageOf(encodeCursor(7), ptr(100))
	if err != nil || p != (storage.Page{After: 7, Limit: 100}) {
		t.Fatalf("cursor 7, limit 100: %+v, %v", p, err)
	}
}

func TestOffsetNext(t *testing.T) {
	if offsetNext(storage.Page{After: 0, Limit: 2}, 2, 2) != nil {
		t.Error("a last full page has a next cursor")
	}
	if c := offsetNext(storage.Page{After: 2, Limit: 2}, 2, 5); c == nil {
		t.Error("no next cursor before the end")
	} else if n, _ := decodeCursor(*c); n != 4 {
		t.Errorf("next offset %d; want 4", n)
	}
}
