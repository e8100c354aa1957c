package platform_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lectern/lectern/internal/platform"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/storage/sqlstore"
	"github.com/lectern/lectern/storage/sqlstore/sqltest"
	"github.com/lectern/lectern/tenant"
)

// refusingStore fails every batch insert that holds a site whose slug
// starts with "bad" with err, as PostgreSQL fails a whole multi-row INSERT
// for one value it refuses.
type refusingStore struct {
	*sqlstore.Store
	err error
}

func (s refusingStore) CreateSitesWithKeys(ctx context.Context, sites []*storage.Site, keysFor func([]tenant.ID) ([]*storage.SiteKey, error)) error {
	for _, site := range sites {
		if strings.HasPrefix(site.Slug, "bad") {
			return s.err
		}
	}
	return s.Store.CreateSitesWithKeys(ctx, sites, keysFor)
}

// A batch the database refuses for one line's value is stored one site at
// a time: that line is refused, the others are created. A store that is
// down stops the import, and the lines not reached are reported as not
// imported, never with an empty status.
func TestImportRefusesTheLineTheDatabaseRefuses(t *testing.T) {
	for _, db := range []struct {
		name string
		open func(testing.TB) *sqlstore.Store
	}{{"sqlite", sqltest.SQLite}, {"postgres", sqltest.Postgres}} {
		t.Run(db.name, func(t *testing.T) {
			e := newEnv(t, db.open(t), newMemory(t))
			p := newSite("ref").Slug
			var b strings.Builder
			for _, slug := range []string{p + "-a", "bad-" + p, p + "-c"} {
				fmt.Fprintf(&b, `{"slug":"%s","name":"N","origin":"https://%s.example.test"}`+"\n", slug, slug)
			}
			e.p.Store = refusingStore{e.store, errors.New("ERROR: invalid byte sequence for encoding \"UTF8\": 0x00 (SQLSTATE 22021)")}
			res, err := e.p.ImportSites(t.Context(), importLines(t, b.String()), nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"1:created", "2:refused", "3:created"}, statuses(res)); diff != "" {
				t.Fatalf("statuses (-want +got):\n%s", diff)
			}
			if !strings.Contains(res[1].Reason, "SQLSTATE 22021") {
				t.Errorf("reason %q does not say what the database refused", res[1].Reason)
			}

			e.p.Store = refusingStore{e.store, fmt.Errorf("%w: connection reset", storage.ErrUnavailable)}
			b.Reset()
			for _, slug := range []string{"bad-x" + p, p + "-y"} {
				fmt.Fprintf(&b, `{"slug":"%s","name":"N","origin":"https://%s.example.test"}`+"\n", slug, slug)
			}
			res, err = e.p.ImportSites(t.Context(), importLines(t, b.String()), nil)
			if !errors.Is(err, storage.ErrUnavailable) {
				t.Fatalf("error %v; want the store's", err)
			}
			for _, r := range res {
				if r.Status != platform.ImportRefused || !strings.Contains(r.Reason, "not imported") {
					t.Errorf("line %d: %+v; want refused as not imported", r.Line, r)
				}
			}
		})
	}
}

// Lines are numbered as in the file, blank lines and an over-long line
// included; a byte order mark before the first line is dropped.
func TestReadImportLinesNumbersFileLines(t *testing.T) {
	text := "\ufeff{\"a\":1}\n\n\n\n" + strings.Repeat("x", platform.MaxImportLine+10) + "\n{\"b\":2}\n"
	lines, err := platform.ReadImportLines(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range lines {
		got = append(got, fmt.Sprintf("%d:%v:%s", l.Line, l.TooLong, l.Raw))
	}
	if diff := cmp.Diff([]string{`1:false:{"a":1}`, "5:true:", `6:false:{"b":2}`}, got); diff != "" {
		t.Fatalf("lines (-want +got):\n%s", diff)
	}
}

// The site reference rule of --site: an exact slug, else an ID in
// canonical decimal; a slug wins over the ID of the same digits.
func TestSiteByRef(t *testing.T) {
	e := newEnv(t, sqltest.SQLite(t), newMemory(t))
	a := e.createSite(t, "ref")
	digits := newSite("x")
	digits.Slug = fmt.Sprint(a.ID)
	if err := e.p.CreateSite(t.Context(), digits); err != nil {
		t.Fatal(err)
	}
	for ref, want := range map[string]tenant.ID{a.Slug: a.ID, fmt.Sprint(a.ID): digits.ID, fmt.Sprint(digits.ID): digits.ID} {
		s, err := platform.SiteByRef(t.Context(), e.store, ref)
		if err != nil || s.ID != want {
			t.Errorf("SiteByRef(%q) = %v, %v; want site %d", ref, s, err, want)
		}
	}
	for _, ref := range []string{"", fmt.Sprintf("%dabc", a.ID), fmt.Sprintf("0%d", digits.ID), fmt.Sprintf(" %d", digits.ID), "0x1", "-1", "99999"} {
		if _, err := platform.SiteByRef(t.Context(), e.store, ref); !errors.Is(err, platform.ErrNoSite) {
			t.Errorf("SiteByRef(%q): %v; want ErrNoSite", ref, err)
		}
	}
}

func TestCheckPicture(t *testing.T) {
	for _, tc := range []struct {
		picture string
		ok      bool
	}{
		{"", true},
		{"https://cdn.example/p.png", true},
		{"http://127.0.0.1:8080/p.png", true},
		{"http://localhost/p.png", true},
		{"http://example.com/p.png", false},
		{"javascript:alert(1)", false},
		{"data:image/png;base64,AAAA", false},
		{"not a url", false},
		{"https://user@cdn.example/p.png", false},
		{"//cdn.example/p.png", false},
	} {
		if err := platform.CheckPicture(tc.picture); (err == nil) != tc.ok {
			t.Errorf("CheckPicture(%q) = %v; want ok %v", tc.picture, err, tc.ok)
		}
	}
}
