package platform_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lectern/lectern/internal/platform"
	"github.com/lectern/lectern/storage"
)

func importLines(t *testing.T, text string) []platform.ImportInput {
	t.Helper()
	lines, err := platform.ReadImportLines(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

// statuses reduces results to "line:status" for comparison.
func statuses(rs []platform.ImportResult) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = fmt.Sprintf("%d:%s", r.Line, r.Status)
	}
	return out
}

func TestImportSitesIsIdempotent(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		p := newSite("imp").Slug // a fresh prefix for this run
		var b strings.Builder
		for i := range 25 {
			fmt.Fprintf(&b, `{"slug":"%s-%d","name":"Course %d","origin":"https://%s-%d.example.test","variant":"b","settings":{"aliases":["www.%s-%d.example.test"],"id_tokens":true,"key_rotation_days":30}}`+"\n", p, i, i, p, i, p, i)
		}
		file := b.String()
		sites := e.subscribe(t, platform.SitesChannel)

		first, err := e.p.ImportSites(t.Context(), importLines(t, file), &platform.ImportOptions{BatchSize: 10, Workers: 3})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range first {
			if r.Status != platform.ImportCreated || r.SiteID == 0 {
				t.Fatalf("first import: line %d: %+v, want created with an id", r.Line, r)
			}
		}
		// One broadcast per batch of new sites (25 sites, batches of 10).
		for range 3 {
			if got := next(t, sites, "batch broadcast"); got != "0" {
				t.Fatalf("broadcast %q, want 0 (sites added)", got)
			}
		}

		// Every created site resolves, with its settings, and can sign.
		s, err := e.store.SiteBySlug(t.Context(), p+"-7")
		if err != nil {
			t.Fatal(err)
		}
		if s.RegistrationVariant != "B" || !s.IDTokensEnabled || platform.KeyRotationDays(s) != 30 || len(s.Aliases) != 1 {
			t.Errorf("stored site = %+v", s)
		}
		ts, err := e.store.LookupHost(t.Context(), "www."+p+"-7.example.test")
		if err != nil || ts == nil || ts.ID != s.ID {
			t.Errorf("alias resolves to %+v, %v; want site %d", ts, err, s.ID)
		}
		if _, err := e.p.Keys.SigningKey(t.Context(), s.ID); err != nil {
			t.Errorf("imported site cannot sign: %v", err)
		}

		// The same file again changes nothing.
		again, err := e.p.ImportSites(t.Context(), importLines(t, file), nil)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range again {
			if r.Status != platform.ImportUnchanged || r.SiteID != first[i].SiteID {
				t.Fatalf("second import: line %d: %+v, want unchanged site %d", r.Line, r, first[i].SiteID)
			}
		}
		keys, err := e.store.SiteKeys(t.Context(), s.ID, s.CreatedAt)
		if err != nil || len(keys) != 1 {
			t.Errorf("after the second import the site has %d keys (%v), want its one key", len(keys), err)
		}

		// A changed line is a conflict and changes nothing, unless --update.
		changed := strings.Replace(file, `"name":"Course 3"`, `"name":"Renamed"`, 1)
		res, err := e.p.ImportSites(t.Context(), importLines(t, changed), nil)
		if err != nil {
			t.Fatal(err)
		}
		if r := res[3]; r.Status != platform.ImportConflict || !strings.Contains(r.Reason, "name") {
			t.Errorf("changed line: %+v, want a conflict naming the name", r)
		}
		if s3, _ := e.store.SiteBySlug(t.Context(), p+"-3"); s3.Name != "Course 3" {
			t.Errorf("a conflict overwrote the name: %q", s3.Name)
		}
		res, err = e.p.ImportSites(t.Context(), importLines(t, changed), &platform.ImportOptions{Update: true})
		if err != nil {
			t.Fatal(err)
		}
		if r := res[3]; r.Status != platform.ImportUpdated {
			t.Errorf("changed line with Update: %+v, want updated", r)
		}
		if s3, _ := e.store.SiteBySlug(t.Context(), p+"-3"); s3.Name != "Renamed" || platform.KeyRotationDays(s3) != 30 {
			t.Errorf("after --update: name %q, rotation %d days", s3.Name, platform.KeyRotationDays(s3))
		}
	})
}

func TestImportSitesRefusesBadLines(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		taken := e.createSite(t, "taken")
		p := newSite("bad").Slug
		line := func(slug, origin string) string {
			return fmt.Sprintf(`{"slug":%q,"name":"N","origin":%q}`, slug, origin)
		}
		file := strings.Join([]string{
			line(p+"-ok", "https://"+p+"-ok.example.test"),       // 1 created
			`{"slug": "x", "name": `,                             // 2 malformed
			`{"name":"No slug"}`,                                 // 3 missing slug and origin
			line(p+"-badorigin", "ftp://nope.example.test"),      // 4 bad origin
			line(p+"-ok", "https://"+p+"-dup.example.test"),      // 5 duplicate slug in file
			line(p+"-dup-host", "https://"+p+"-ok.example.test"), // 6 duplicate host in file
			line(p+"-stolen", taken.Origin),                      // 7 origin taken by a stored site
			`{"slug":"` + p + `-typo","name":"N","origin":"https://` + p + `-typo.example.test","setings":{}}`, // 8 unknown member
			line("Bad Slug!", "https://"+p+"-slug.example.test"),                                               // 9 bad slug
			"", // blank: skipped, numbering goes on
			line(p+"-ok2", "https://"+p+"-ok2.example.test"),                                              // 11 created
			`{"slug":"` + p + `-v","name":"N","origin":"https://` + p + `-v.example.test","variant":"C"}`, // 12 bad variant
		}, "\n")
		res, err := e.p.ImportSites(t.Context(), importLines(t, file), &platform.ImportOptions{BatchSize: 2})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"1:created", "2:refused", "3:refused", "4:refused", "5:refused", "6:refused", "7:refused",
			"8:refused", "9:refused", "11:created", "12:refused"}
		if diff := cmp.Diff(want, statuses(res)); diff != "" {
			t.Fatalf("statuses (-want +got):\n%s", diff)
		}
		reasons := map[int]string{2: "malformed JSON", 3: "missing slug, origin", 4: "origin", 5: "already on line 1",
			6: "already on line 1", 7: "served by another site", 8: "unknown field", 9: "slug", 12: "variant"}
		for _, r := range res {
			if want, ok := reasons[r.Line]; ok && !strings.Contains(r.Reason, want) {
				t.Errorf("line %d: reason %q, want it to mention %q", r.Line, r.Reason, want)
			}
		}
		// Refused lines stored nothing; the site whose origin was claimed
		// is untouched.
		for _, slug := range []string{p + "-badorigin", p + "-stolen", p + "-dup-host"} {
			if _, err := e.store.SiteBySlug(t.Context(), slug); err != storage.ErrNotFound {
				t.Errorf("refused site %s was stored (err %v)", slug, err)
			}
		}
		if got, _ := e.store.LookupHost(t.Context(), taken.Tenant().Host()); got == nil || got.ID != taken.ID {
			t.Errorf("the taken origin now resolves to %+v", got)
		}
	})
}
