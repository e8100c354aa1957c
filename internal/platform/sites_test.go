package platform_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lectern/lectern/internal/platform"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// jwksKIDs returns the key IDs the site publishes.
func jwksKIDs(t *testing.T, e *env, site tenant.ID) []string {
	t.Helper()
	raw, err := e.p.Keys.JWKS(t.Context(), site)
	if err != nil {
		t.Fatalf("JWKS of site %d: %v", site, err)
	}
	var set struct {
		Keys []struct {
			KID string `json:"kid"`
		} `json:"keys"`
	}
	if err := json.Unmarshal(raw, &set); err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(set.Keys))
	for i, k := range set.Keys {
		out[i] = k.KID
	}
	return out
}

// A new site is stored in canonical form, resolvable by its origin and
// aliases, can sign at once, and is announced to the other replicas.
func TestCreateSite(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		sites := e.subscribe(t, platform.SitesChannel)
		s := &storage.Site{
			Slug: "  academy ", Name: "Academy", Origin: "HTTPS://Academy.Example.TEST:443/",
			Aliases: []string{"WWW.Academy.Example.test:443", "learn.example.test:8443"}, RegistrationVariant: tenant.VariantVendor,
		}
		if err := e.p.CreateSite(t.Context(), s); err != nil {
			t.Fatal(err)
		}
		if s.ID == 0 {
			t.Fatal("CreateSite did not set the site's ID")
		}
		if got := next(t, sites, "site created"); got != siteMessage(s.ID) {
			t.Errorf("broadcast %q, want the site ID %q", got, siteMessage(s.ID))
		}

		stored, err := e.store.SiteBySlug(t.Context(), "academy")
		if err != nil {
			t.Fatalf("the trimmed slug finds no site: %v", err)
		}
		if stored.Origin != "https://academy.example.test" {
			t.Errorf("origin stored as %q, want the canonical https://academy.example.test", stored.Origin)
		}
		if diff := cmp.Diff([]string{"www.academy.example.test", "learn.example.test:8443"}, stored.Aliases); diff != "" {
			t.Errorf("aliases (-want +got):\n%s", diff)
		}
		for _, host := range []string{"academy.example.test", "www.academy.example.test", "learn.example.test:8443"} {
			got, err := e.store.LookupHost(t.Context(), host)
			if err != nil || got == nil || got.ID != s.ID {
				t.Errorf("LookupHost(%s) = %v, %v; want site %d", host, got, err, s.ID)
			}
		}

		sk, err := e.p.Keys.SigningKey(t.Context(), s.ID)
		if err != nil {
			t.Fatalf("the new site cannot sign: %v", err)
		}
		if kids := jwksKIDs(t, e, s.ID); !cmp.Equal(kids, []string{sk.KID}) {
			t.Errorf("JWKS kids %q, want just the signing key %q", kids, sk.KID)
		}
	})
}

// Invalid operator input is refused with ErrInvalid before anything is
// stored or announced.
func TestCreateSiteRefusesInvalidInput(t *testing.T) {
	long := strings.Repeat("a", 65)
	eachBackend(t, func(t *testing.T, e *env) {
		sites := e.subscribe(t, platform.SitesChannel)
		for _, tc := range []struct {
			name   string
			change func(*storage.Site)
		}{
			{"empty slug", func(s *storage.Site) { s.Slug = "  " }},
			{"upper-case slug", func(s *storage.Site) { s.Slug = "Academy" }},
			{"slug with a dot", func(s *storage.Site) { s.Slug = "a.b" }},
			{"slug of 65 characters", func(s *storage.Site) { s.Slug = long }},
			{"blank name", func(s *storage.Site) { s.Name = " \t" }},
			{"origin with a path", func(s *storage.Site) { s.Origin = "https://a.example.test/school" }},
			{"origin with a query", func(s *storage.Site) { s.Origin = "https://a.example.test?x=1" }},
			{"origin with user info", func(s *storage.Site) { s.Origin = "https://me@a.example.test" }},
			{"ftp origin", func(s *storage.Site) { s.Origin = "ftp://a.example.test" }},
			{"origin without a scheme", func(s *storage.Site) { s.Origin = "a.example.test" }},
			{"alias with a path", func(s *storage.Site) { s.Aliases = []string{"www.example.test/x"} }},
			{"alias with a scheme", func(s *storage.Site) { s.Aliases = []string{"https://www.example.test"} }},
			{"unknown registration variant", func(s *storage.Site) { s.RegistrationVariant = "C" }},
		} {
			t.Run(tc.name, func(t *testing.T) {
				s := newSite("invalid")
				slug := s.Slug
				tc.change(s)
				wantErrIs(t, e.p.CreateSite(t.Context(), s), platform.ErrInvalid, tc.name)
				if s.ID != 0 {
					t.Errorf("the refused site got ID %d", s.ID)
				}
				if _, err := e.store.SiteBySlug(t.Context(), slug); err == nil {
					t.Error("the refused site was stored")
				}
			})
		}
		e.wantNothingAnnounced(t, sites, "a refused site")
	})
}

func TestCreateSiteTakenSlugOrOrigin(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		first := e.createSite(t, "taken")
		dupSlug := newSite("other")
		dupSlug.Slug = first.Slug
		wantErrIs(t, e.p.CreateSite(t.Context(), dupSlug), storage.ErrConflict, "a taken slug")
		dupOrigin := newSite("other")
		dupOrigin.Origin = strings.ToUpper(first.Origin)
		wantErrIs(t, e.p.CreateSite(t.Context(), dupOrigin), storage.ErrConflict, "a taken origin in another case")
		// The first site keeps its one key: a failed duplicate must not
		// have added keys to anybody's ring.
		if kids := jwksKIDs(t, e, first.ID); len(kids) != 1 {
			t.Errorf("the first site publishes %d keys, want 1", len(kids))
		}
	})
}

func TestUpdateSite(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		s := e.createSite(t, "update")
		kidsBefore := jwksKIDs(t, e, s.ID)
		sites := e.subscribe(t, platform.SitesChannel)

		s.Name = "Renamed"
		s.Origin = "HTTPS://Renamed.Example.TEST"
		s.Aliases = []string{"Old.Example.test"}
		s.IDTokensEnabled = true
		if err := e.p.UpdateSite(t.Context(), s); err != nil {
			t.Fatal(err)
		}
		if got := next(t, sites, "site updated"); got != siteMessage(s.ID) {
			t.Errorf("broadcast %q, want %q", got, siteMessage(s.ID))
		}
		stored, err := e.store.SiteByID(t.Context(), s.ID)
		if err != nil {
			t.Fatal(err)
		}
		if stored.Name != "Renamed" || stored.Origin != "https://renamed.example.test" || !stored.IDTokensEnabled ||
			!cmp.Equal(stored.Aliases, []string{"old.example.test"}) {
			t.Errorf("stored %+v; want the new name, canonical origin and alias, id_tokens on", stored)
		}
		if got, _ := e.store.LookupHost(t.Context(), "renamed.example.test"); got == nil || got.ID != s.ID {
			t.Errorf("the new origin does not resolve to the site: %v", got)
		}
		if !cmp.Equal(jwksKIDs(t, e, s.ID), kidsBefore) {
			t.Error("updating a site changed its key ring")
		}

		bad := *stored
		bad.Origin = "https://renamed.example.test/path"
		wantErrIs(t, e.p.UpdateSite(t.Context(), &bad), platform.ErrInvalid, "update to an origin with a path")
		if again, _ := e.store.SiteByID(t.Context(), s.ID); again.Origin != "https://renamed.example.test" {
			t.Errorf("a refused update changed the origin to %q", again.Origin)
		}

		missing := newSite("missing")
		missing.ID = s.ID + 1000
		wantErrIs(t, e.p.UpdateSite(t.Context(), missing), storage.ErrNotFound, "update of a site that does not exist")
		e.wantNothingAnnounced(t, sites, "a refused update")
	})
}

// A rotation with activateIn 0 signs with the new key at once, keeps the old
// one published for tokens it signed, and is announced on the keys channel.
func TestRotateKey(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		s := e.createSite(t, "rotate")
		old, err := e.p.Keys.SigningKey(t.Context(), s.ID)
		if err != nil {
			t.Fatal(err)
		}
		keysCh := e.subscribe(t, platform.KeysChannel)
		k, err := e.p.RotateKey(t.Context(), s.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := next(t, keysCh, "key rotated"); got != siteMessage(s.ID) {
			t.Errorf("broadcast %q, want %q", got, siteMessage(s.ID))
		}
		now, err := e.p.Keys.SigningKey(t.Context(), s.ID)
		if err != nil {
			t.Fatal(err)
		}
		if now.KID != k.KID || now.KID == old.KID {
			t.Errorf("signing with %s after rotating to %s (old %s)", now.KID, k.KID, old.KID)
		}
		kids := jwksKIDs(t, e, s.ID)
		for _, want := range []string{old.KID, k.KID} {
			if !strings.Contains(strings.Join(kids, " "), want) {
				t.Errorf("JWKS %q lacks %s", kids, want)
			}
		}
	})
}
