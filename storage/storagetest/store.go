package storagetest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// RunStoreTests runs the storage.Store contract against one backend, in the
// manner of dex's storage/conformance. Every subtest gets its own store from
// newStore, which must be empty and migrated and must arrange its own
// cleanup; the Ping subtest also closes its store, so Close must tolerate a
// second call.
//
// Every subtest builds two sites and asserts that neither sees the other's
// rows (STYLE.md, "Tenancy").
func RunStoreTests(t *testing.T, newStore func(t *testing.T) storage.Store) {
	tests := []struct {
		name string
		run  func(t *testing.T, f *fixture)
	}{
		{"SiteCreate", testSiteCreate},
		{"SiteConflicts", testSiteConflicts},
		{"SiteUpdate", testSiteUpdate},
		{"ListSites", testListSites},
		{"SiteKeys", testSiteKeys},
		{"SetSiteKeyState", testSetSiteKeyState},
		{"UserCreate", testUserCreate},
		{"UserUpdate", testUserUpdate},
		{"UserPicture", testUserPicture},
		{"UserLanguage", testUserLanguage},
		{"Roles", testRoles},
		{"SitesOfUser", testSitesOfUser},
		{"ClientCreate", testClientCreate},
		{"ClientUpdate", testClientUpdate},
		{"ClientDelete", testClientDelete},
		{"PlatformClients", testPlatformClients},
		{"CIMDHosts", testCIMDHosts},
		{"GrantCreate", testGrantCreate},
		{"RotateRefreshToken", testRotateRefreshToken},
		{"RefreshReuse", testRefreshReuse},
		{"RefreshExpired", testRefreshExpired},
		{"RefreshGrantExpiry", testRefreshGrantExpiry},
		{"RefreshConcurrent", testRefreshConcurrent},
		{"RevokeWhileRotating", testRevokeWhileRotating},
		{"RevokeGrant", testRevokeGrant},
		{"GrantWithAudit", testGrantWithAudit},
		{"MemberReads", testMemberReads},
		{"CatalogReads", testCatalogReads},
		{"OperatorReads", testOperatorReads},
		{"PurgeUnusedClients", testPurgeUnusedClients},
		{"RevokedGrants", testRevokedGrants},
		{"RevokedTokens", testRevokedTokens},
		{"RevocationVersions", testRevocationVersions},
		{"TouchGrant", testTouchGrant},
		{"ListGrants", testListGrants},
		{"LiveGrants", testLiveGrants},
		{"Consent", testConsent},
		{"Audit", testAudit},
		{"AdminCourseRecords", testCourseRecords},
		{"AdminSectionRecords", testSectionRecords},
		{"AdminLectureRecords", testLectureRecords},
		{"AdminEnrollmentRecords", testEnrollmentRecords},
		{"AdminEventRecords", testEventRecords},
		{"AdminMembershipPlanRecords", testMembershipPlanRecords},
		{"AdminDigitalProductRecords", testDigitalProductRecords},
		{"AdminLecturerRecords", testLecturerRecords},
		{"AdminCouponRecords", testCouponRecords},
		{"AdminPostRecords", testPostRecords},
		{"AdminPageRecords", testPageRecords},
		{"AdminCommentRecords", testCommentRecords},
		{"AdminFormSubmissionRecords", testFormSubmissionRecords},
		{"AdminFileRecords", testFileRecords},
		{"AdminSubscriptionRecords", testSubscriptionRecords},
		{"AdminEventRegistrationRecords", testEventRegistrationRecords},
		{"AdminDigitalProductPurchaseRecords", testDigitalProductPurchaseRecords},
		{"AdminCascades", testAdminCascades},
		{"AdminCurriculum", testCurriculum},
		{"AdminListMembers", testListMembers},
		{"AdminOrderByID", testOrderByID},
		{"AdminEnrollmentSummary", testEnrollmentSummary},
		{"AdminAppearance", testAppearance},
		{"Ping", testPing},
		{"Invitations", testInvitations},
		{"AccountTokens", testAccountTokens},
		{"OutboxClaims", testOutboxClaims},
		{"Passkeys", testPasskeys},
		{"TOTP", testTOTP},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.run(t, newFixture(t, newStore(t)))
		})
	}
}

// zone lies east of UTC on purpose: callers pass local times, and a backend
// that stores times as text must still compare instants, not strings.
var zone = time.FixedZone("UTC+9", 9*60*60)

// cmpOpts tolerate what differs between backends without meaning anything:
// sub-millisecond rounding (PostgreSQL keeps microseconds), time zones, and
// nil versus empty slices and maps.
var cmpOpts = []cmp.Option{cmpopts.EquateApproxTime(time.Millisecond), cmpopts.EquateEmpty()}

const day = 24 * time.Hour

// fixture is one fresh store with two sites, A and B, on distinct origins.
type fixture struct {
	s   storage.Store
	ctx context.Context
	now time.Time
	a   *storage.Site
	b   *storage.Site
}

func newFixture(t *testing.T, s storage.Store) *fixture {
	t.Helper()
	f := &fixture{s: s, ctx: t.Context(), now: time.Now().In(zone).Truncate(time.Millisecond)}
	f.a = &storage.Site{
		Slug:                "site-a",
		Name:                "Academy A",
		Origin:              "https://a.school.test",
		Aliases:             []string{"learn.a.school.test"},
		RegistrationVariant: tenant.VariantVendor,
		IDTokensEnabled:     true,
		MCPConnectionsBeta:  true,
		Description:         "The first site.",
		Locale:              "en",
		Settings:            map[string]any{"theme": "dark"},
	}
	f.b = &storage.Site{
		Slug:                "site-b",
		Name:                "School B",
		Origin:              "http://b.school.test:8080",
		Aliases:             []string{"www.b.school.test:8080"},
		RegistrationVariant: tenant.VariantOpen,
		CIMDOpen:            true,
		Description:         "The second site.",
		Locale:              "de",
		Settings:            map[string]any{},
	}
	for _, site := range []*storage.Site{f.a, f.b} {
		if err := s.CreateSite(f.ctx, site); err != nil {
			t.Fatalf("CreateSite(%s): %v", site.Slug, err)
		}
	}
	if f.a.ID == 0 || f.b.ID == 0 || f.a.ID == f.b.ID {
		t.Fatalf("CreateSite gave IDs %d and %d; want two distinct non-zero IDs", f.a.ID, f.b.ID)
	}
	f.resolves(t, "a.school.test", f.a)
	f.resolves(t, "learn.a.school.test", f.a)
	f.resolves(t, "b.school.test:8080", f.b)
	f.resolves(t, "www.b.school.test:8080", f.b)
	return f
}

// resolves asserts that LookupHost(host) is want, or no site when want is nil.
func (f *fixture) resolves(t *testing.T, host string, want *storage.Site) {
	t.Helper()
	got, err := f.s.LookupHost(f.ctx, host)
	if err != nil {
		t.Fatalf("LookupHost(%q): %v", host, err)
	}
	if want == nil {
		if got != nil {
			t.Errorf("LookupHost(%q) = site %d (%s); want no site", host, got.ID, got.Slug)
		}
		return
	}
	if got == nil {
		t.Errorf("LookupHost(%q) = no site; want site %d (%s)", host, want.ID, want.Slug)
		return
	}
	diff(t, "LookupHost("+host+")", want.Tenant(), got)
}

func (f *fixture) user(t *testing.T, email string) *storage.User {
	t.Helper()
	u := &storage.User{ID: newID(), Email: email, Name: strings.Split(email, "@")[0], PasswordHash: "$argon2id$v=19$m=65536,t=1,p=4$c2FsdA$aGFzaA"}
	if err := f.s.CreateUser(f.ctx, u); err != nil {
		t.Fatalf("CreateUser(%s): %v", email, err)
	}
	return u
}

func (f *fixture) client(t *testing.T, site *storage.Site, clientID, name string) *storage.Client {
	t.Helper()
	id := site.ID
	c := &storage.Client{
		SiteID:          &id,
		ClientID:        clientID,
		Name:            name,
		Audience:        storage.AudienceMember,
		Type:            storage.ClientPublic,
		ApplicationType: "native",
		RedirectURIs:    []string{"http://127.0.0.1/callback"},
		Scopes:          []string{"openid", "profile", "email", "account:read", "account:write"},
		Source:          storage.SourceAdmin,
		CreatedBy:       "owner@" + site.Slug,
	}
	if err := f.s.CreateClient(f.ctx, c); err != nil {
		t.Fatalf("CreateClient(%s at %s): %v", clientID, site.Slug, err)
	}
	return c
}

// grant creates a grant of user at site, expiring after grantTTL, and its
// first refresh token, expiring after tokenTTL; it returns the token's hash.
func (f *fixture) grant(t *testing.T, site *storage.Site, userID string, grantTTL, tokenTTL time.Duration) (*storage.Grant, []byte) {
	t.Helper()
	g := &storage.Grant{
		ID:         newID(),
		SiteID:     site.ID,
		ClientID:   "app",
		UserID:     userID,
		Scopes:     []string{"openid", "account:read"},
		Resource:   site.Origin,
		AuthTime:   f.now.Add(-time.Minute),
		CreatedAt:  f.now,
		ExpiresAt:  f.now.Add(grantTTL),
		LastUsedAt: f.now,
	}
	h := newHash()
	rt := &storage.RefreshToken{TokenHash: h, CreatedAt: f.now, ExpiresAt: f.now.Add(tokenTTL)}
	if err := f.s.CreateGrant(f.ctx, g, rt); err != nil {
		t.Fatalf("CreateGrant: %v", err)
	}
	return g, h
}

// rotate presents oldHash at site at time at, asking for a fresh token that
// expires after ttl; it returns the new token's hash, the grant and the error.
func (f *fixture) rotate(site tenant.ID, oldHash []byte, at time.Time, ttl time.Duration) ([]byte, *storage.Grant, error) {
	h := newHash()
	g, err := f.s.RotateRefreshToken(f.ctx, site, oldHash, &storage.RefreshToken{TokenHash: h, CreatedAt: at, ExpiresAt: at.Add(ttl)}, at)
	return h, g, err
}

func (f *fixture) grantByID(t *testing.T, site tenant.ID, id string) *storage.Grant {
	t.Helper()
	g, err := f.s.GrantByID(f.ctx, site, id)
	if err != nil {
		t.Fatalf("GrantByID(%d, %s): %v", site, id, err)
	}
	return g
}

func (f *fixture) token(t *testing.T, site tenant.ID, hash []byte) *storage.RefreshToken {
	t.Helper()
	rt, _, err := f.s.RefreshTokenByHash(f.ctx, site, hash)
	if err != nil {
		t.Fatalf("RefreshTokenByHash(%d): %v", site, err)
	}
	return rt
}

func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// newHash is the SHA-256 of a fresh 256-bit refresh token.
func newHash() []byte {
	var b [32]byte
	_, _ = rand.Read(b[:])
	h := sha256.Sum256(b[:])
	return h[:]
}

// errOf drops the value of a call that returns one with its error.
func errOf[T any](_ T, err error) error { return err }

func must(t *testing.T, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func wantErr(t *testing.T, err, want error, what string) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Errorf("%s: error %v; want %v", what, err, want)
	}
}

func diff(t *testing.T, what string, want, got any) {
	t.Helper()
	if d := cmp.Diff(want, got, cmpOpts...); d != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", what, d)
	}
}

// sameInstant allows for PostgreSQL's microsecond precision only.
func sameInstant(x, y time.Time) bool { return x.Sub(y).Abs() < time.Microsecond }

func ptr[T any](v T) *T { return &v }

// ---- sites ----------------------------------------------------------------

func testSiteCreate(t *testing.T, f *fixture) {
	for _, site := range []*storage.Site{f.a, f.b} {
		got, err := f.s.SiteByID(f.ctx, site.ID)
		must(t, err, "SiteByID")
		diff(t, "SiteByID("+site.Slug+")", site, got)
		got, err = f.s.SiteBySlug(f.ctx, site.Slug)
		must(t, err, "SiteBySlug")
		diff(t, "SiteBySlug("+site.Slug+")", site, got)
	}
	// A host is host[:port]: b.school.test without B's port is another origin.
	for _, host := range []string{"unknown.test", "school.test", "b.school.test", "a.school.test:8080", ""} {
		f.resolves(t, host, nil)
	}
	_, err := f.s.SiteByID(f.ctx, f.a.ID+f.b.ID+1000)
	wantErr(t, err, storage.ErrNotFound, "SiteByID(unknown)")
	_, err = f.s.SiteBySlug(f.ctx, "site-c")
	wantErr(t, err, storage.ErrNotFound, "SiteBySlug(unknown)")
}

func testSiteConflicts(t *testing.T, f *fixture) {
	tests := []struct {
		name string
		site storage.Site
	}{
		{"slug", storage.Site{Slug: "site-a", Origin: "https://c.school.test", Aliases: []string{"c-alias.school.test"}}},
		{"origin", storage.Site{Slug: "site-c", Origin: "https://a.school.test", Aliases: []string{"c-alias.school.test"}}},
		{"alias is another site's alias", storage.Site{Slug: "site-c", Origin: "https://c.school.test", Aliases: []string{"learn.a.school.test"}}},
		{"alias is another site's origin host", storage.Site{Slug: "site-c", Origin: "https://c.school.test", Aliases: []string{"b.school.test:8080"}}},
		{"origin host is another site's alias", storage.Site{Slug: "site-c", Origin: "http://www.b.school.test:8080", Aliases: []string{"c-alias.school.test"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			site := tt.site
			site.Name, site.RegistrationVariant = "Site C", tenant.VariantOpen
			wantErr(t, f.s.CreateSite(f.ctx, &site), storage.ErrConflict, "CreateSite")
			// Nothing of the refused site may remain: no row, no host.
			if tt.name != "slug" {
				_, err := f.s.SiteBySlug(f.ctx, "site-c")
				wantErr(t, err, storage.ErrNotFound, "SiteBySlug(site-c) after the refused create")
			}
			f.resolves(t, "c.school.test", nil)
			f.resolves(t, "c-alias.school.test", nil)
			f.resolves(t, "a.school.test", f.a)
			f.resolves(t, "learn.a.school.test", f.a)
			f.resolves(t, "b.school.test:8080", f.b)
			f.resolves(t, "www.b.school.test:8080", f.b)
		})
	}

	t.Run("update to a taken slug", func(t *testing.T) {
		upd := *f.b
		upd.Slug = "site-a"
		wantErr(t, f.s.UpdateSite(f.ctx, &upd), storage.ErrConflict, "UpdateSite")
		got, err := f.s.SiteByID(f.ctx, f.b.ID)
		must(t, err, "SiteByID(B)")
		diff(t, "B after the refused update", f.b, got)
	})
	t.Run("update to a taken alias", func(t *testing.T) {
		upd := *f.b
		upd.Aliases = []string{"learn.a.school.test"}
		wantErr(t, f.s.UpdateSite(f.ctx, &upd), storage.ErrConflict, "UpdateSite")
		// The refused update must not have dropped B's own hosts.
		f.resolves(t, "learn.a.school.test", f.a)
		f.resolves(t, "www.b.school.test:8080", f.b)
		f.resolves(t, "b.school.test:8080", f.b)
	})
}

func testSiteUpdate(t *testing.T, f *fixture) {
	upd := *f.a
	upd.Name = "Academy A, renamed"
	upd.Origin = "https://academy.a.school.test"
	upd.Aliases = []string{"new.a.school.test"}
	upd.MCPConnectionsBeta = false
	upd.CIMDOpen = true
	upd.Settings = map[string]any{"theme": "light"}
	must(t, f.s.UpdateSite(f.ctx, &upd), "UpdateSite")

	got, err := f.s.SiteByID(f.ctx, f.a.ID)
	must(t, err, "SiteByID")
	diff(t, "A after update", &upd, got)
	if !sameInstant(got.CreatedAt, f.a.CreatedAt) {
		t.Errorf("UpdateSite moved CreatedAt from %v to %v", f.a.CreatedAt, got.CreatedAt)
	}
	f.resolves(t, "a.school.test", nil)
	f.resolves(t, "learn.a.school.test", nil)
	f.resolves(t, "academy.a.school.test", &upd)
	f.resolves(t, "new.a.school.test", &upd)

	// B is untouched.
	got, err = f.s.SiteByID(f.ctx, f.b.ID)
	must(t, err, "SiteByID(B)")
	diff(t, "B after A's update", f.b, got)
	f.resolves(t, "b.school.test:8080", f.b)
	f.resolves(t, "www.b.school.test:8080", f.b)

	// The old hosts are free again.
	c := &storage.Site{Slug: "site-c", Name: "Site C", Origin: "https://a.school.test", Aliases: []string{"learn.a.school.test"}, RegistrationVariant: tenant.VariantOpen}
	must(t, f.s.CreateSite(f.ctx, c), "CreateSite on A's former hosts")
	f.resolves(t, "a.school.test", c)
	f.resolves(t, "learn.a.school.test", c)

	ghost := storage.Site{ID: f.a.ID + f.b.ID + c.ID + 1000, Slug: "ghost", Name: "Ghost", Origin: "https://ghost.test", RegistrationVariant: tenant.VariantOpen}
	wantErr(t, f.s.UpdateSite(f.ctx, &ghost), storage.ErrNotFound, "UpdateSite(unknown)")
	f.resolves(t, "ghost.test", nil)
}

func testListSites(t *testing.T, f *fixture) {
	all := []*storage.Site{f.a, f.b}
	for _, slug := range []string{"site-c", "site-d", "site-e"} {
		site := &storage.Site{Slug: slug, Name: slug, Origin: "https://" + slug + ".test", RegistrationVariant: tenant.VariantOpen}
		must(t, f.s.CreateSite(f.ctx, site), "CreateSite")
		all = append(all, site)
	}
	slices.SortFunc(all, func(x, y *storage.Site) int { return int(x.ID - y.ID) })

	got, err := f.s.ListSites(f.ctx, 0, 100)
	must(t, err, "ListSites")
	want := make([]storage.Site, len(all))
	for i, s := range all {
		want[i] = *s
	}
	diff(t, "ListSites(0, 100)", want, got)

	var pages [][]tenant.ID
	var after tenant.ID
	for range len(all) + 1 {
		page, err := f.s.ListSites(f.ctx, after, 2)
		must(t, err, "ListSites")
		if len(page) == 0 {
			break
		}
		var ids []tenant.ID
		for _, s := range page {
			ids = append(ids, s.ID)
		}
		pages = append(pages, ids)
		after = page[len(page)-1].ID
	}
	wantPages := [][]tenant.ID{{all[0].ID, all[1].ID}, {all[2].ID, all[3].ID}, {all[4].ID}}
	diff(t, "ListSites pages of 2", wantPages, pages)
}

// ---- keys -----------------------------------------------------------------

func (f *fixture) key(t *testing.T, site *storage.Site, kid, state string, created time.Time) *storage.SiteKey {
	t.Helper()
	k := &storage.SiteKey{
		SiteID:        site.ID,
		KID:           kid,
		Alg:           "ES256",
		PublicJWK:     `{"kty":"EC","crv":"P-256","kid":"` + kid + `"}`,
		SealedPrivate: []byte("sealed:" + site.Slug + ":" + kid),
		State:         state,
		ActivatesAt:   created,
		CreatedAt:     created,
	}
	must(t, f.s.CreateSiteKey(f.ctx, k), "CreateSiteKey("+kid+")")
	return k
}

func (f *fixture) siteKeys(t *testing.T, site *storage.Site, retiredAfter time.Time) []storage.SiteKey {
	t.Helper()
	keys, err := f.s.SiteKeys(f.ctx, site.ID, retiredAfter)
	must(t, err, "SiteKeys")
	return keys
}

func testSiteKeys(t *testing.T, f *fixture) {
	k1 := f.key(t, f.a, "k1", storage.KeyActive, f.now.Add(-72*time.Hour))
	k2 := f.key(t, f.a, "k2", storage.KeyActive, f.now.Add(-48*time.Hour))
	k3 := f.key(t, f.a, "k3", storage.KeyActive, f.now.Add(-2*time.Hour))
	k4 := f.key(t, f.a, "k4", storage.KeyNext, f.now.Add(-time.Hour))
	// The same kid may exist at another site.
	bk3 := f.key(t, f.b, "k3", storage.KeyActive, f.now.Add(-30*time.Minute))

	dup := &storage.SiteKey{SiteID: f.a.ID, KID: "k3", Alg: "ES256", PublicJWK: "{}", SealedPrivate: []byte("x"), State: storage.KeyNext, ActivatesAt: f.now, CreatedAt: f.now}
	wantErr(t, f.s.CreateSiteKey(f.ctx, dup), storage.ErrConflict, "CreateSiteKey(duplicate kid at A)")

	k1Retired, k2Retired := f.now.Add(-48*time.Hour), f.now.Add(-time.Hour)
	must(t, f.s.SetSiteKeyState(f.ctx, f.a.ID, "k1", storage.KeyRetired, k1Retired), "retire k1")
	must(t, f.s.SetSiteKeyState(f.ctx, f.a.ID, "k2", storage.KeyRetired, k2Retired), "retire k2")
	k1.State, k1.RetiredAt = storage.KeyRetired, &k1Retired
	k2.State, k2.RetiredAt = storage.KeyRetired, &k2Retired

	tests := []struct {
		name         string
		site         *storage.Site
		retiredAfter time.Time
		want         []*storage.SiteKey
	}{
		{"A, retired within a day", f.a, f.now.Add(-day), []*storage.SiteKey{k4, k3, k2}},
		{"A, retired within three days", f.a, f.now.Add(-3 * day), []*storage.SiteKey{k4, k3, k2, k1}},
		// k2 retired an hour ago, after the cutoff 90 minutes ago; written in
		// a zone east of UTC, this cutoff reads later than k2's retirement
		// as text.
		{"A, retired within 90 minutes", f.a, f.now.Add(-90 * time.Minute), []*storage.SiteKey{k4, k3, k2}},
		{"A, none retired after now", f.a, f.now, []*storage.SiteKey{k4, k3}},
		{"B", f.b, f.now.Add(-3 * day), []*storage.SiteKey{bk3}},
	}
	for _, tt := range tests {
		want := make([]storage.SiteKey, len(tt.want))
		for i, k := range tt.want {
			want[i] = *k
		}
		diff(t, "SiteKeys("+tt.name+")", want, f.siteKeys(t, tt.site, tt.retiredAfter))
	}
}

func testSetSiteKeyState(t *testing.T, f *fixture) {
	f.key(t, f.a, "k1", storage.KeyActive, f.now.Add(-2*time.Hour))
	f.key(t, f.a, "k2", storage.KeyNext, f.now.Add(-time.Hour))
	f.key(t, f.b, "k1", storage.KeyActive, f.now.Add(-time.Hour))

	wantErr(t, f.s.SetSiteKeyState(f.ctx, f.a.ID, "missing", storage.KeyRetired, f.now), storage.ErrNotFound, "SetSiteKeyState(unknown kid)")
	// B has no k2; B's ID must not reach A's.
	wantErr(t, f.s.SetSiteKeyState(f.ctx, f.b.ID, "k2", storage.KeyActive, f.now), storage.ErrNotFound, "SetSiteKeyState(B, A's kid)")

	// Retiring B's k1 leaves A's k1 alone.
	must(t, f.s.SetSiteKeyState(f.ctx, f.b.ID, "k1", storage.KeyRetired, f.now), "retire B's k1")
	must(t, f.s.SetSiteKeyState(f.ctx, f.a.ID, "k2", storage.KeyActive, f.now), "activate A's k2")

	states := func(keys []storage.SiteKey) map[string]string {
		m := map[string]string{}
		for _, k := range keys {
			m[k.KID] = k.State
		}
		return m
	}
	diff(t, "A's key states", map[string]string{"k1": storage.KeyActive, "k2": storage.KeyActive}, states(f.siteKeys(t, f.a, f.now.Add(-day))))

	bKeys := f.siteKeys(t, f.b, f.now.Add(-day))
	if len(bKeys) != 1 || bKeys[0].State != storage.KeyRetired || bKeys[0].RetiredAt == nil {
		t.Fatalf("B's keys after retiring k1 = %+v; want k1 retired with RetiredAt", bKeys)
	}
	diff(t, "B's k1 RetiredAt", f.now, *bKeys[0].RetiredAt)
	if keys := f.siteKeys(t, f.b, f.now.Add(time.Minute)); len(keys) != 0 {
		t.Errorf("SiteKeys(B, after its retirement) = %d keys; want none", len(keys))
	}
	for _, k := range f.siteKeys(t, f.a, f.now.Add(-day)) {
		if k.RetiredAt != nil {
			t.Errorf("A's %s has RetiredAt %v; only B's k1 was retired", k.KID, *k.RetiredAt)
		}
	}
}

// ---- users and roles ------------------------------------------------------

func testUserCreate(t *testing.T, f *fixture) {
	u := &storage.User{ID: newID(), Email: "Ada.Lovelace@Example.Test", Name: "Ada", Picture: "https://a.school.test/ada.png", PasswordHash: "$argon2id$hash"}
	must(t, f.s.CreateUser(f.ctx, u), "CreateUser")
	got, err := f.s.UserByID(f.ctx, u.ID)
	must(t, err, "UserByID")
	diff(t, "UserByID", u, got)

	for _, email := range []string{"ada.lovelace@example.test", "ADA.LOVELACE@EXAMPLE.TEST", "Ada.Lovelace@Example.Test"} {
		got, err := f.s.UserByEmail(f.ctx, email)
		if err != nil {
			t.Errorf("UserByEmail(%q): %v", email, err)
			continue
		}
		diff(t, "UserByEmail("+email+")", u, got)
	}

	dup := &storage.User{ID: newID(), Email: "ada.LOVELACE@example.TEST", Name: "Impostor"}
	wantErr(t, f.s.CreateUser(f.ctx, dup), storage.ErrConflict, "CreateUser(same e-mail, other case)")
	_, err = f.s.UserByID(f.ctx, dup.ID)
	wantErr(t, err, storage.ErrNotFound, "UserByID(refused user)")
	again := &storage.User{ID: u.ID, Email: "other@example.test", Name: "Same ID"}
	wantErr(t, f.s.CreateUser(f.ctx, again), storage.ErrConflict, "CreateUser(same ID)")

	_, err = f.s.UserByID(f.ctx, "nobody")
	wantErr(t, err, storage.ErrNotFound, "UserByID(unknown)")
	_, err = f.s.UserByEmail(f.ctx, "nobody@example.test")
	wantErr(t, err, storage.ErrNotFound, "UserByEmail(unknown)")

	// Users are platform-wide; a new one holds no role at either site.
	for _, site := range []*storage.Site{f.a, f.b} {
		roles, err := f.s.RolesAt(f.ctx, site.ID, u.ID)
		must(t, err, "RolesAt")
		if len(roles) != 0 {
			t.Errorf("new user holds %v at %s", roles, site.Slug)
		}
	}
}

func testUserUpdate(t *testing.T, f *fixture) {
	u := f.user(t, "grace@example.test")
	f.user(t, "alan@example.test")

	upd := *u
	upd.Name, upd.Email, upd.PasswordHash, upd.Picture = "Grace Hopper", "Grace.Hopper@Example.Test", "$argon2id$new", "https://pic.test/g.png"
	must(t, f.s.UpdateUser(f.ctx, &upd), "UpdateUser")
	got, err := f.s.UserByID(f.ctx, u.ID)
	must(t, err, "UserByID")
	diff(t, "user after update", &upd, got)
	if !sameInstant(got.CreatedAt, u.CreatedAt) {
		t.Errorf("UpdateUser moved CreatedAt from %v to %v", u.CreatedAt, got.CreatedAt)
	}
	_, err = f.s.UserByEmail(f.ctx, "grace@example.test")
	wantErr(t, err, storage.ErrNotFound, "UserByEmail(old e-mail)")
	if got, err := f.s.UserByEmail(f.ctx, "grace.hopper@example.test"); err != nil || got.ID != u.ID {
		t.Errorf("UserByEmail(new e-mail) = %v, %v; want user %s", got, err, u.ID)
	}

	clash := upd
	clash.Email = "ALAN@example.test"
	wantErr(t, f.s.UpdateUser(f.ctx, &clash), storage.ErrConflict, "UpdateUser(taken e-mail)")
	got, err = f.s.UserByID(f.ctx, u.ID)
	must(t, err, "UserByID")
	if !strings.EqualFold(got.Email, "grace.hopper@example.test") {
		t.Errorf("e-mail after refused update = %q; want grace.hopper@example.test", got.Email)
	}

	ghost := storage.User{ID: "ghost", Email: "ghost@example.test", Name: "Ghost"}
	wantErr(t, f.s.UpdateUser(f.ctx, &ghost), storage.ErrNotFound, "UpdateUser(unknown)")
	_, err = f.s.UserByEmail(f.ctx, "ghost@example.test")
	wantErr(t, err, storage.ErrNotFound, "UserByEmail(ghost)")
}

// testUserPicture: SetUserPicture changes the uploaded picture alone and
// says which one it replaced.
func testUserPicture(t *testing.T, f *fixture) {
	u := f.user(t, "pic@example.test")
	other := f.user(t, "nopic@example.test")
	prev, err := f.s.SetUserPicture(f.ctx, u.ID, "aaaa.png")
	must(t, err, "SetUserPicture")
	if prev != "" {
		t.Errorf("first picture replaced %q; want nothing", prev)
	}
	prev, err = f.s.SetUserPicture(f.ctx, u.ID, "bbbb.jpg")
	must(t, err, "SetUserPicture again")
	if prev != "aaaa.png" {
		t.Errorf("second picture replaced %q; want aaaa.png", prev)
	}
	got, err := f.s.UserByID(f.ctx, u.ID)
	must(t, err, "UserByID")
	want := *u
	want.PictureFile = "bbbb.jpg"
	if got.PictureFile != want.PictureFile || got.Name != u.Name || got.Email != u.Email || got.PasswordHash != u.PasswordHash || got.Picture != u.Picture {
		t.Errorf("after SetUserPicture: %+v; want %+v with only the picture changed", got, want)
	}
	if o, _ := f.s.UserByID(f.ctx, other.ID); o.PictureFile != "" {
		t.Errorf("another user's picture became %q", o.PictureFile)
	}
	prev, err = f.s.SetUserPicture(f.ctx, u.ID, "")
	must(t, err, "SetUserPicture(none)")
	if got, _ := f.s.UserByID(f.ctx, u.ID); prev != "bbbb.jpg" || got.PictureFile != "" {
		t.Errorf("removing: replaced %q, now %q", prev, got.PictureFile)
	}
	_, err = f.s.SetUserPicture(f.ctx, "ghost", "cccc.png")
	wantErr(t, err, storage.ErrNotFound, "SetUserPicture(unknown user)")
}

// testUserLanguage: SetUserLanguage remembers the chosen language on the
// account alone.
func testUserLanguage(t *testing.T, f *fixture) {
	u := f.user(t, "lang@example.test")
	other := f.user(t, "nolang@example.test")
	if u.Language != "" {
		t.Fatalf("a new user has language %q; want none", u.Language)
	}
	must(t, f.s.SetUserLanguage(f.ctx, u.ID, "de"), "SetUserLanguage")
	got, err := f.s.UserByID(f.ctx, u.ID)
	must(t, err, "UserByID")
	if got.Language != "de" || got.Name != u.Name || got.PasswordHash != u.PasswordHash {
		t.Errorf("after SetUserLanguage(de): %+v", got)
	}
	if o, _ := f.s.UserByID(f.ctx, other.ID); o.Language != "" {
		t.Errorf("another user's language became %q", o.Language)
	}
	wantErr(t, f.s.SetUserLanguage(f.ctx, "ghost", "fr"), storage.ErrNotFound, "SetUserLanguage(unknown user)")
}

func (f *fixture) roles(t *testing.T, site *storage.Site, userID string) []string {
	t.Helper()
	roles, err := f.s.RolesAt(f.ctx, site.ID, userID)
	must(t, err, "RolesAt")
	return roles
}

func testRoles(t *testing.T, f *fixture) {
	u := f.user(t, "u@example.test")
	v := f.user(t, "v@example.test")

	must(t, f.s.GrantRole(f.ctx, f.a.ID, u.ID, storage.RoleStudent), "GrantRole")
	must(t, f.s.GrantRole(f.ctx, f.a.ID, u.ID, storage.RoleStudent), "GrantRole(held role)")
	diff(t, "RolesAt(A, u)", []string{storage.RoleStudent}, f.roles(t, f.a, u.ID))

	must(t, f.s.GrantRole(f.ctx, f.a.ID, u.ID, storage.RoleAdmin), "GrantRole")
	must(t, f.s.GrantRole(f.ctx, f.a.ID, u.ID, storage.RoleLecturer), "GrantRole")
	diff(t, "RolesAt(A, u), sorted", []string{storage.RoleAdmin, storage.RoleLecturer, storage.RoleStudent}, f.roles(t, f.a, u.ID))
	diff(t, "RolesAt(B, u)", []string(nil), f.roles(t, f.b, u.ID))
	diff(t, "RolesAt(A, v)", []string(nil), f.roles(t, f.a, v.ID))

	must(t, f.s.GrantRole(f.ctx, f.b.ID, u.ID, storage.RoleOwner), "GrantRole(B)")
	diff(t, "RolesAt(B, u)", []string{storage.RoleOwner}, f.roles(t, f.b, u.ID))
	diff(t, "RolesAt(A, u) after a role at B", []string{storage.RoleAdmin, storage.RoleLecturer, storage.RoleStudent}, f.roles(t, f.a, u.ID))

	must(t, f.s.RevokeRole(f.ctx, f.a.ID, u.ID, storage.RoleStudent), "RevokeRole")
	diff(t, "RolesAt(A, u) after revoke", []string{storage.RoleAdmin, storage.RoleLecturer}, f.roles(t, f.a, u.ID))

	// Revoking at B a role held only at A changes nothing at A.
	if err := f.s.RevokeRole(f.ctx, f.b.ID, u.ID, storage.RoleAdmin); err != nil && !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("RevokeRole(B, role held at A): %v; want nil or ErrNotFound", err)
	}
	diff(t, "RolesAt(A, u) after revoke at B", []string{storage.RoleAdmin, storage.RoleLecturer}, f.roles(t, f.a, u.ID))
	diff(t, "RolesAt(B, u) after revoke at B", []string{storage.RoleOwner}, f.roles(t, f.b, u.ID))
}

func testSitesOfUser(t *testing.T, f *fixture) {
	u := f.user(t, "u@example.test")
	v := f.user(t, "v@example.test")
	w := f.user(t, "w@example.test")
	for _, r := range []struct {
		site *storage.Site
		user *storage.User
		role string
	}{
		{f.a, u, storage.RoleStudent}, {f.a, u, storage.RoleLecturer}, {f.b, u, storage.RoleOwner}, {f.b, v, storage.RoleStudent},
	} {
		must(t, f.s.GrantRole(f.ctx, r.site.ID, r.user.ID, r.role), "GrantRole")
	}
	entry := func(s *storage.Site, roles ...string) storage.UserSiteRoles {
		return storage.UserSiteRoles{SiteID: s.ID, Slug: s.Slug, Name: s.Name, Origin: s.Origin, Roles: roles}
	}
	bySite := cmpopts.SortSlices(func(x, y storage.UserSiteRoles) bool { return x.SiteID < y.SiteID })
	tests := []struct {
		name string
		user *storage.User
		want []storage.UserSiteRoles
	}{
		{"roles at both sites", u, []storage.UserSiteRoles{entry(f.a, storage.RoleLecturer, storage.RoleStudent), entry(f.b, storage.RoleOwner)}},
		{"role at B only", v, []storage.UserSiteRoles{entry(f.b, storage.RoleStudent)}},
		{"no role", w, nil},
	}
	for _, tt := range tests {
		got, err := f.s.SitesOfUser(f.ctx, tt.user.ID)
		must(t, err, "SitesOfUser")
		if d := cmp.Diff(tt.want, got, append(cmpOpts, bySite)...); d != "" {
			t.Errorf("SitesOfUser(%s) mismatch (-want +got):\n%s", tt.name, d)
		}
	}
}

// ---- clients --------------------------------------------------------------

func (f *fixture) clientByID(t *testing.T, site *storage.Site, clientID string) *storage.Client {
	t.Helper()
	c, err := f.s.ClientByID(f.ctx, site.ID, clientID)
	if err != nil {
		t.Fatalf("ClientByID(%s, %s): %v", site.Slug, clientID, err)
	}
	return c
}

func (f *fixture) listClients(t *testing.T, site *storage.Site) []storage.Client {
	t.Helper()
	cs, err := f.s.ListClients(f.ctx, site.ID, "")
	must(t, err, "ListClients")
	slices.SortFunc(cs, func(x, y storage.Client) int { return strings.Compare(x.ClientID, y.ClientID) })
	return cs
}

func testClientCreate(t *testing.T, f *fixture) {
	aApp := f.client(t, f.a, "app", "A's app")
	bApp := f.client(t, f.b, "app", "B's app")
	aOnly := f.client(t, f.a, "only-a", "A only")
	if *aApp.SiteID != f.a.ID || *bApp.SiteID != f.b.ID {
		t.Fatalf("created clients at sites %d and %d; want %d and %d", *aApp.SiteID, *bApp.SiteID, f.a.ID, f.b.ID)
	}

	diff(t, "ClientByID(A, app)", aApp, f.clientByID(t, f.a, "app"))
	diff(t, "ClientByID(B, app)", bApp, f.clientByID(t, f.b, "app"))
	diff(t, "ClientByID(A, only-a)", aOnly, f.clientByID(t, f.a, "only-a"))
	_, err := f.s.ClientByID(f.ctx, f.b.ID, "only-a")
	wantErr(t, err, storage.ErrNotFound, "ClientByID(B, A's client)")
	_, err = f.s.ClientByID(f.ctx, f.a.ID, "missing")
	wantErr(t, err, storage.ErrNotFound, "ClientByID(unknown)")

	a := f.a.ID
	dup := &storage.Client{SiteID: &a, ClientID: "app", Name: "dup", Audience: storage.AudienceMember, Type: storage.ClientPublic, ApplicationType: "native", Source: storage.SourceAdmin}
	wantErr(t, f.s.CreateClient(f.ctx, dup), storage.ErrConflict, "CreateClient(client_id taken at A)")

	conf := &storage.Client{SiteID: &a, ClientID: "conf", SecretHash: []byte{1, 2, 3}, Name: "Confidential", Audience: storage.AudienceOperator,
		Type: storage.ClientConfidential, ApplicationType: "web", RedirectURIs: []string{"https://app.test/cb", "https://app.test/cb2"},
		Scopes: []string{"courses:read"}, Source: storage.SourceDCR, Reviewed: true, CreatedBy: "dcr", ResourceServer: true}
	must(t, f.s.CreateClient(f.ctx, conf), "CreateClient(confidential)")
	diff(t, "ClientByID(A, conf)", conf, f.clientByID(t, f.a, "conf"))

	diff(t, "ListClients(A)", []storage.Client{*aApp, *conf, *aOnly}, f.listClients(t, f.a))
	diff(t, "ListClients(B)", []storage.Client{*bApp}, f.listClients(t, f.b))
	dcr, err := f.s.ListClients(f.ctx, f.a.ID, storage.SourceDCR)
	must(t, err, "ListClients(A, dcr)")
	diff(t, "ListClients(A, dcr)", []storage.Client{*conf}, dcr)
}

func testClientUpdate(t *testing.T, f *fixture) {
	aApp := f.client(t, f.a, "app", "A's app")
	aOther := f.client(t, f.a, "other", "A's other app")
	bApp := f.client(t, f.b, "app", "B's app")

	upd := *aApp
	upd.Name = "A's app, renamed"
	upd.Type = storage.ClientConfidential
	upd.SecretHash = []byte("secret-hash")
	upd.RedirectURIs = []string{"https://app.test/callback"}
	upd.Scopes = []string{"openid"}
	upd.Reviewed = true
	upd.ResourceServer = true
	upd.LastUsedAt = ptr(f.now)
	must(t, f.s.UpdateClient(f.ctx, &upd), "UpdateClient")
	diff(t, "A's app after update", &upd, f.clientByID(t, f.a, "app"))
	diff(t, "A's other app after A's app update", aOther, f.clientByID(t, f.a, "other"))
	diff(t, "B's app after A's update", bApp, f.clientByID(t, f.b, "app"))

	// A client cannot be moved to, or updated through, another site.
	cross := *aOther
	b := f.b.ID
	cross.SiteID, cross.Name = &b, "hijacked"
	wantErr(t, f.s.UpdateClient(f.ctx, &cross), storage.ErrNotFound, "UpdateClient(A's client with B's ID)")
	diff(t, "A's other app after the cross-site update", aOther, f.clientByID(t, f.a, "other"))
	_, err := f.s.ClientByID(f.ctx, f.b.ID, "other")
	wantErr(t, err, storage.ErrNotFound, "ClientByID(B, other) after the cross-site update")

	// Updating a client that does not exist changes nothing, whether or not
	// the caller knows a row ID.
	a := f.a.ID
	for _, id := range []int64{0, aApp.ID + aOther.ID + bApp.ID + 1000} {
		ghost := storage.Client{ID: id, SiteID: &a, ClientID: "ghost", Name: "ghost", Audience: storage.AudienceMember,
			Type: storage.ClientPublic, ApplicationType: "native", Source: storage.SourceAdmin}
		wantErr(t, f.s.UpdateClient(f.ctx, &ghost), storage.ErrNotFound, "UpdateClient(unknown)")
	}
	diff(t, "ListClients(A) after the refused updates", []storage.Client{upd, *aOther}, f.listClients(t, f.a))
	diff(t, "ListClients(B) after the refused updates", []storage.Client{*bApp}, f.listClients(t, f.b))
}

func testClientDelete(t *testing.T, f *fixture) {
	f.client(t, f.a, "app", "A's app")
	aOnly := f.client(t, f.a, "only-a", "A only")
	bApp := f.client(t, f.b, "app", "B's app")

	wantErr(t, f.s.DeleteClient(f.ctx, f.b.ID, "only-a"), storage.ErrNotFound, "DeleteClient(B, A's client)")
	diff(t, "A's only-a after B's delete", aOnly, f.clientByID(t, f.a, "only-a"))

	must(t, f.s.DeleteClient(f.ctx, f.a.ID, "app"), "DeleteClient(A, app)")
	_, err := f.s.ClientByID(f.ctx, f.a.ID, "app")
	wantErr(t, err, storage.ErrNotFound, "ClientByID(A, deleted app)")
	diff(t, "B's app after A's delete", bApp, f.clientByID(t, f.b, "app"))
	diff(t, "ListClients(A)", []storage.Client{*aOnly}, f.listClients(t, f.a))
	wantErr(t, f.s.DeleteClient(f.ctx, f.a.ID, "app"), storage.ErrNotFound, "DeleteClient(A, app) again")
}

func vendorClient(clientID string) *storage.Client {
	return &storage.Client{ClientID: clientID, Name: "Vendor", Audience: storage.AudienceOperator, Type: storage.ClientPublic,
		ApplicationType: "native", RedirectURIs: []string{"http://127.0.0.1/callback"}, Scopes: []string{"courses:read"},
		Source: storage.SourceVendor, Reviewed: true, CreatedBy: "ops"}
}

func testPlatformClients(t *testing.T, f *fixture) {
	v := &storage.VendorIntegration{Name: "Vendor X", ClientNames: []string{"Vendor X", "Vendor X Desktop"}, ClientID: "vendor-x"}
	pc := vendorClient("vendor-x")
	must(t, f.s.CreateVendorIntegration(f.ctx, v, pc), "CreateVendorIntegration")
	if pc.SiteID != nil {
		t.Fatalf("vendor client has SiteID %d; want nil (platform-wide)", *pc.SiteID)
	}
	// Visible from every site, but listed by none.
	diff(t, "ClientByID(A, vendor-x)", pc, f.clientByID(t, f.a, "vendor-x"))
	diff(t, "ClientByID(B, vendor-x)", pc, f.clientByID(t, f.b, "vendor-x"))
	diff(t, "ListClients(A)", []storage.Client(nil), f.listClients(t, f.a))

	vs, err := f.s.ListVendorIntegrations(f.ctx)
	must(t, err, "ListVendorIntegrations")
	diff(t, "ListVendorIntegrations", []storage.VendorIntegration{*v}, vs)

	// A site's own client with the same ID wins at that site only.
	own := f.client(t, f.a, "vendor-x", "A's own vendor-x")
	diff(t, "ClientByID(A, vendor-x) with A's own", own, f.clientByID(t, f.a, "vendor-x"))
	diff(t, "ClientByID(B, vendor-x) with A's own", pc, f.clientByID(t, f.b, "vendor-x"))
	diff(t, "ListClients(A) with A's own", []storage.Client{*own}, f.listClients(t, f.a))

	// The site's client wins however the rows were created: here B's own
	// comes first and the platform client with its ID after.
	bOwn := f.client(t, f.b, "vendor-y", "B's own vendor-y")
	vy, py := &storage.VendorIntegration{Name: "Vendor Y", ClientNames: []string{"Vendor Y"}, ClientID: "vendor-y"}, vendorClient("vendor-y")
	must(t, f.s.CreateVendorIntegration(f.ctx, vy, py), "CreateVendorIntegration(vendor-y)")
	diff(t, "ClientByID(B, vendor-y)", bOwn, f.clientByID(t, f.b, "vendor-y"))
	diff(t, "ClientByID(A, vendor-y)", py, f.clientByID(t, f.a, "vendor-y"))

	// A second platform client with the same ID is refused, atomically.
	v2 := &storage.VendorIntegration{Name: "Vendor X again", ClientNames: []string{"X2"}, ClientID: "vendor-x"}
	wantErr(t, f.s.CreateVendorIntegration(f.ctx, v2, vendorClient("vendor-x")), storage.ErrConflict, "CreateVendorIntegration(taken client_id)")
	plain := vendorClient("plain")
	must(t, f.s.CreateClient(f.ctx, plain), "CreateClient(platform-wide)")
	v3 := &storage.VendorIntegration{Name: "Plain", ClientNames: []string{"Plain"}, ClientID: "plain"}
	wantErr(t, f.s.CreateVendorIntegration(f.ctx, v3, vendorClient("plain")), storage.ErrConflict, "CreateVendorIntegration(client_id of a platform client)")
	vs, err = f.s.ListVendorIntegrations(f.ctx)
	must(t, err, "ListVendorIntegrations")
	slices.SortFunc(vs, func(x, y storage.VendorIntegration) int { return strings.Compare(x.ClientID, y.ClientID) })
	diff(t, "ListVendorIntegrations after refused creates", []storage.VendorIntegration{*v, *vy}, vs)

	// A site can delete its own client but never the platform client.
	must(t, f.s.DeleteClient(f.ctx, f.a.ID, "vendor-x"), "DeleteClient(A, own vendor-x)")
	diff(t, "ClientByID(A, vendor-x) after deleting A's own", pc, f.clientByID(t, f.a, "vendor-x"))
	wantErr(t, f.s.DeleteClient(f.ctx, f.a.ID, "vendor-x"), storage.ErrNotFound, "DeleteClient(A, platform client)")
	diff(t, "ClientByID(B, vendor-x) after A's deletes", pc, f.clientByID(t, f.b, "vendor-x"))
}

func (f *fixture) cimdHost(t *testing.T, site *storage.Site, host string) (siteID *tenant.ID, reviewed bool) {
	t.Helper()
	h, err := f.s.CIMDHost(f.ctx, site.ID, host)
	if err != nil {
		t.Fatalf("CIMDHost(%s, %s): %v", site.Slug, host, err)
	}
	if h.Host != host {
		t.Errorf("CIMDHost(%s, %s).Host = %q", site.Slug, host, h.Host)
	}
	return h.SiteID, h.Reviewed
}

func testCIMDHosts(t *testing.T, f *fixture) {
	const host = "cimd.vendor.test"
	a := f.a.ID
	type entry struct {
		SiteID   *tenant.ID
		Reviewed bool
	}
	check := func(site *storage.Site, want entry) {
		t.Helper()
		siteID, reviewed := f.cimdHost(t, site, host)
		diff(t, "CIMDHost("+site.Slug+")", want, entry{siteID, reviewed})
	}

	must(t, f.s.AllowCIMDHost(f.ctx, &storage.CIMDHost{Host: host}), "AllowCIMDHost(platform)")
	check(f.a, entry{nil, false})
	check(f.b, entry{nil, false})

	must(t, f.s.AllowCIMDHost(f.ctx, &storage.CIMDHost{SiteID: &a, Host: host, Reviewed: true}), "AllowCIMDHost(A)")
	check(f.a, entry{&a, true})
	check(f.b, entry{nil, false})

	// Allowing again updates the review state in place.
	must(t, f.s.AllowCIMDHost(f.ctx, &storage.CIMDHost{Host: host, Reviewed: true}), "AllowCIMDHost(platform, reviewed)")
	check(f.b, entry{nil, true})
	must(t, f.s.AllowCIMDHost(f.ctx, &storage.CIMDHost{SiteID: &a, Host: host, Reviewed: false}), "AllowCIMDHost(A, unreviewed)")
	check(f.a, entry{&a, false}) // the site's own entry wins, even when less reviewed
	check(f.b, entry{nil, true})

	must(t, f.s.AllowCIMDHost(f.ctx, &storage.CIMDHost{SiteID: &a, Host: "only-a.test"}), "AllowCIMDHost(A, only-a)")
	_, err := f.s.CIMDHost(f.ctx, f.b.ID, "only-a.test")
	wantErr(t, err, storage.ErrNotFound, "CIMDHost(B, A's host)")
	_, err = f.s.CIMDHost(f.ctx, f.a.ID, "unknown.test")
	wantErr(t, err, storage.ErrNotFound, "CIMDHost(unknown)")
}

// ---- grants and refresh tokens --------------------------------------------

func testGrantCreate(t *testing.T, f *fixture) {
	u := f.user(t, "u@example.test")
	g, h := f.grant(t, f.a, u.ID, 90*day, 30*day)

	diff(t, "GrantByID(A)", g, f.grantByID(t, f.a.ID, g.ID))
	_, err := f.s.GrantByID(f.ctx, f.b.ID, g.ID)
	wantErr(t, err, storage.ErrNotFound, "GrantByID(B, A's grant)")
	_, err = f.s.GrantByID(f.ctx, f.a.ID, "missing")
	wantErr(t, err, storage.ErrNotFound, "GrantByID(unknown)")

	rt, rg, err := f.s.RefreshTokenByHash(f.ctx, f.a.ID, h)
	must(t, err, "RefreshTokenByHash")
	want := storage.RefreshToken{SiteID: f.a.ID, GrantID: g.ID, TokenHash: h, CreatedAt: f.now, ExpiresAt: f.now.Add(30 * day)}
	diff(t, "first refresh token", &want, rt)
	diff(t, "grant of the first refresh token", g, rg)
	_, _, err = f.s.RefreshTokenByHash(f.ctx, f.b.ID, h)
	wantErr(t, err, storage.ErrNotFound, "RefreshTokenByHash(B, A's token)")
	_, _, err = f.s.RefreshTokenByHash(f.ctx, f.a.ID, newHash())
	wantErr(t, err, storage.ErrNotFound, "RefreshTokenByHash(unknown)")

	gs, err := f.s.ListGrants(f.ctx, f.b.ID, "", true)
	must(t, err, "ListGrants(B)")
	diff(t, "ListGrants(B)", []storage.Grant(nil), gs)
	gs, err = f.s.ListGrants(f.ctx, f.a.ID, "", false)
	must(t, err, "ListGrants(A)")
	diff(t, "ListGrants(A)", []storage.Grant{*g}, gs)
}

func testRotateRefreshToken(t *testing.T, f *fixture) {
	u := f.user(t, "u@example.test")
	g, h1 := f.grant(t, f.a, u.ID, 90*day, 30*day)

	// last_used_at is rewritten only when over an hour stale: a write on
	// every refresh would double the writes of the hottest path.
	t1 := f.now.Add(2 * time.Hour)
	h2, got, err := f.rotate(f.a.ID, h1, t1, 30*day)
	must(t, err, "RotateRefreshToken")
	if got == nil || got.ID != g.ID {
		t.Fatalf("RotateRefreshToken returned grant %+v; want %s", got, g.ID)
	}
	diff(t, "returned grant's LastUsedAt", t1, got.LastUsedAt)

	rt2, g2, err := f.s.RefreshTokenByHash(f.ctx, f.a.ID, h2)
	must(t, err, "RefreshTokenByHash(next)")
	want := storage.RefreshToken{SiteID: f.a.ID, GrantID: g.ID, TokenHash: h2, ParentHash: h1, CreatedAt: t1, ExpiresAt: t1.Add(30 * day)}
	diff(t, "next refresh token", &want, rt2)
	diff(t, "stored grant's LastUsedAt", t1, g2.LastUsedAt)
	if rt1 := f.token(t, f.a.ID, h1); rt1.UsedAt == nil {
		t.Error("rotated token has no UsedAt")
	} else {
		diff(t, "rotated token's UsedAt", t1, *rt1.UsedAt)
	}
	// A grant used a minute ago is recent enough: not rewritten.
	g3, hRecent := f.grant(t, f.a, u.ID, 90*day, 30*day)
	_, got3, err := f.rotate(f.a.ID, hRecent, f.now.Add(time.Minute), 30*day)
	must(t, err, "RotateRefreshToken(recently used grant)")
	diff(t, "LastUsedAt of a grant rotated within the hour", g3.LastUsedAt, got3.LastUsedAt)
	diff(t, "stored LastUsedAt of a grant rotated within the hour", g3.LastUsedAt, f.grantByID(t, f.a.ID, g3.ID).LastUsedAt)

	// Site B can neither rotate A's token nor trip A's reuse detection.
	t2 := t1.Add(time.Minute)
	hB, _, err := f.rotate(f.b.ID, h2, t2, 30*day)
	wantErr(t, err, storage.ErrNotFound, "RotateRefreshToken(B, A's live token)")
	_, _, err = f.rotate(f.b.ID, h1, t2, 30*day)
	wantErr(t, err, storage.ErrNotFound, "RotateRefreshToken(B, A's used token)")
	_, _, err = f.s.RefreshTokenByHash(f.ctx, f.b.ID, hB)
	wantErr(t, err, storage.ErrNotFound, "token B's refused rotation asked for")
	if g := f.grantByID(t, f.a.ID, g.ID); g.RevokedAt != nil {
		t.Fatal("presenting A's used token at B revoked A's grant")
	}

	// The chain goes on.
	h3, _, err := f.rotate(f.a.ID, h2, t2, 30*day)
	must(t, err, "RotateRefreshToken(second)")
	diff(t, "third token's parent", h2, f.token(t, f.a.ID, h3).ParentHash)
}

func testRefreshReuse(t *testing.T, f *fixture) {
	u := f.user(t, "u@example.test")
	g, h1 := f.grant(t, f.a, u.ID, 90*day, 30*day)
	gB, hB := f.grant(t, f.b, u.ID, 90*day, 30*day)

	t1 := f.now.Add(time.Minute)
	h2, _, err := f.rotate(f.a.ID, h1, t1, 30*day)
	must(t, err, "RotateRefreshToken")

	replayed, got, err := f.rotate(f.a.ID, h1, t1.Add(time.Minute), 30*day)
	wantErr(t, err, storage.ErrRefreshReused, "RotateRefreshToken(used token)")
	// The caller needs the grant to push its revocation to the cache.
	if got == nil || got.ID != g.ID {
		t.Errorf("reuse returned grant %+v; want grant %s", got, g.ID)
	}
	if g := f.grantByID(t, f.a.ID, g.ID); g.RevokedAt == nil {
		t.Fatal("grant not revoked after refresh token reuse")
	}
	_, _, err = f.rotate(f.a.ID, h2, t1.Add(2*time.Minute), 30*day)
	wantErr(t, err, storage.ErrNotFound, "RotateRefreshToken(token from the first rotation, after reuse)")
	if rt := f.token(t, f.a.ID, h2); rt.RevokedAt == nil {
		t.Error("token from the first rotation not revoked after reuse")
	}
	_, _, err = f.s.RefreshTokenByHash(f.ctx, f.a.ID, replayed)
	wantErr(t, err, storage.ErrNotFound, "token the replay asked for")
	_, _, err = f.rotate(f.a.ID, h1, t1.Add(3*time.Minute), 30*day)
	wantErr(t, err, storage.ErrRefreshReused, "RotateRefreshToken(used token, again)")

	gs, err := f.s.ListGrants(f.ctx, f.a.ID, "", false)
	must(t, err, "ListGrants")
	diff(t, "A's live grants after reuse", []storage.Grant(nil), gs)

	// The same user's grant at B is untouched.
	if g := f.grantByID(t, f.b.ID, gB.ID); g.RevokedAt != nil {
		t.Fatal("reuse at A revoked the user's grant at B")
	}
	_, _, err = f.rotate(f.b.ID, hB, t1, 30*day)
	must(t, err, "RotateRefreshToken(B) after reuse at A")
}

func testRefreshExpired(t *testing.T, f *fixture) {
	u := f.user(t, "u@example.test")
	g, h := f.grant(t, f.a, u.ID, 90*day, time.Hour)
	_, hB := f.grant(t, f.b, u.ID, 90*day, 3*time.Hour)

	late, _, err := f.rotate(f.a.ID, h, f.now.Add(2*time.Hour), 30*day)
	wantErr(t, err, storage.ErrNotFound, "RotateRefreshToken(expired token)")
	_, _, err = f.s.RefreshTokenByHash(f.ctx, f.a.ID, late)
	wantErr(t, err, storage.ErrNotFound, "token the expired rotation asked for")
	if g := f.grantByID(t, f.a.ID, g.ID); g.RevokedAt != nil {
		t.Error("an expired token revoked its grant; expiry is not reuse")
	}
	// The refused attempt did not spend the token: before expiry it rotates.
	_, _, err = f.rotate(f.a.ID, h, f.now.Add(30*time.Minute), 30*day)
	must(t, err, "RotateRefreshToken(before expiry, after a refused attempt)")

	// B's token is judged by its own expiry.
	_, _, err = f.rotate(f.b.ID, hB, f.now.Add(2*time.Hour), 30*day)
	must(t, err, "RotateRefreshToken(B, unexpired)")
}

func testRefreshGrantExpiry(t *testing.T, f *fixture) {
	u := f.user(t, "u@example.test")
	g, h1 := f.grant(t, f.a, u.ID, 10*day, 30*day)

	// A token never outlives its grant.
	t1 := f.now.Add(time.Hour)
	h2, _, err := f.rotate(f.a.ID, h1, t1, 30*day)
	must(t, err, "RotateRefreshToken")
	diff(t, "next token's ExpiresAt, capped", g.ExpiresAt, f.token(t, f.a.ID, h2).ExpiresAt)
	// A shorter lifetime is kept.
	t2 := t1.Add(time.Hour)
	h3, _, err := f.rotate(f.a.ID, h2, t2, day)
	must(t, err, "RotateRefreshToken")
	diff(t, "next token's ExpiresAt, uncapped", t2.Add(day), f.token(t, f.a.ID, h3).ExpiresAt)

	// Once the grant has expired, even a live token of it does not rotate.
	short, hs := f.grant(t, f.a, u.ID, time.Hour, 30*day)
	_, _, err = f.rotate(f.a.ID, hs, f.now.Add(2*time.Hour), 30*day)
	wantErr(t, err, storage.ErrNotFound, "RotateRefreshToken(token of an expired grant)")
	if g := f.grantByID(t, f.a.ID, short.ID); g.RevokedAt != nil {
		t.Error("an expired grant was revoked; expiry is not reuse")
	}

	// The same timeline at B is B's own.
	gB, hB := f.grant(t, f.b, u.ID, 2*day, 30*day)
	hB2, _, err := f.rotate(f.b.ID, hB, t1, 30*day)
	must(t, err, "RotateRefreshToken(B)")
	diff(t, "B's next token's ExpiresAt, capped by B's grant", gB.ExpiresAt, f.token(t, f.b.ID, hB2).ExpiresAt)
}

func testRefreshConcurrent(t *testing.T, f *fixture) {
	u := f.user(t, "u@example.test")
	g, h := f.grant(t, f.a, u.ID, 90*day, 30*day)
	gB, hB := f.grant(t, f.b, u.ID, 90*day, 30*day)

	const n = 20
	var (
		wg    sync.WaitGroup
		start = make(chan struct{})
		errs  = make([]error, n)
		next  = make([][]byte, n)
		at    = f.now.Add(time.Minute)
	)
	for i := range n {
		next[i] = newHash()
		wg.Go(func() {
			<-start
			_, errs[i] = f.s.RotateRefreshToken(f.ctx, f.a.ID, h, &storage.RefreshToken{TokenHash: next[i], CreatedAt: at, ExpiresAt: at.Add(30 * day)}, at)
		})
	}
	close(start)
	wg.Wait()

	winner := -1
	for i, err := range errs {
		switch {
		case err == nil:
			if winner >= 0 {
				t.Errorf("rotations %d and %d both succeeded: the grant forked", winner, i)
			}
			winner = i
		case errors.Is(err, storage.ErrRefreshReused):
		default:
			t.Errorf("rotation %d: %v; want success or ErrRefreshReused", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no rotation succeeded")
	}
	if g := f.grantByID(t, f.a.ID, g.ID); g.RevokedAt == nil {
		t.Error("grant not revoked after concurrent reuse")
	}
	_, _, err := f.rotate(f.a.ID, next[winner], at.Add(time.Minute), 30*day)
	wantErr(t, err, storage.ErrNotFound, "RotateRefreshToken(winner's token after reuse)")
	for i := range n {
		if i == winner {
			continue
		}
		if _, _, err := f.s.RefreshTokenByHash(f.ctx, f.a.ID, next[i]); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("losing rotation %d stored its token (err %v)", i, err)
		}
	}
	if g := f.grantByID(t, f.b.ID, gB.ID); g.RevokedAt != nil {
		t.Error("concurrent reuse at A revoked the user's grant at B")
	}
	_, _, err = f.rotate(f.b.ID, hB, at, 30*day)
	must(t, err, "RotateRefreshToken(B) after concurrent reuse at A")
}

// A revocation racing rotations of the same grant must neither fail nor
// leave a token that still rotates.
func testRevokeWhileRotating(t *testing.T, f *fixture) {
	u := f.user(t, "u@example.test")
	g, h := f.grant(t, f.a, u.ID, 90*day, 30*day)
	gB, hB := f.grant(t, f.b, u.ID, 90*day, 30*day)

	const n = 10
	var (
		wg        sync.WaitGroup
		start     = make(chan struct{})
		errs      = make([]error, n)
		next      = make([][]byte, n)
		revokeErr error
		at        = f.now.Add(time.Minute)
	)
	for i := range n {
		next[i] = newHash()
		wg.Go(func() {
			<-start
			_, errs[i] = f.s.RotateRefreshToken(f.ctx, f.a.ID, h, &storage.RefreshToken{TokenHash: next[i], CreatedAt: at, ExpiresAt: at.Add(30 * day)}, at)
		})
	}
	wg.Go(func() {
		<-start
		_, revokeErr = f.s.RevokeGrant(f.ctx, f.a.ID, g.ID, at)
	})
	close(start)
	wg.Wait()

	must(t, revokeErr, "RevokeGrant during rotations")
	wins := 0
	for i, err := range errs {
		switch {
		case err == nil:
			wins++
		case errors.Is(err, storage.ErrRefreshReused), errors.Is(err, storage.ErrNotFound):
		default:
			t.Errorf("rotation %d: %v; want success, ErrRefreshReused or ErrNotFound", i, err)
		}
	}
	if wins > 1 {
		t.Errorf("%d rotations of one token succeeded: the grant forked", wins)
	}
	if g := f.grantByID(t, f.a.ID, g.ID); g.RevokedAt == nil {
		t.Error("grant not revoked")
	}
	for i := range n {
		if _, _, err := f.rotate(f.a.ID, next[i], at.Add(time.Minute), 30*day); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("token of rotation %d after revocation: %v; want ErrNotFound", i, err)
		}
	}
	if g := f.grantByID(t, f.b.ID, gB.ID); g.RevokedAt != nil {
		t.Error("revoking A's grant revoked the user's grant at B")
	}
	_, _, err := f.rotate(f.b.ID, hB, at, 30*day)
	must(t, err, "RotateRefreshToken(B) after A's revocation")
}

func testRevokeGrant(t *testing.T, f *fixture) {
	u := f.user(t, "u@example.test")
	g1, h0 := f.grant(t, f.a, u.ID, 90*day, 30*day)
	_, h2 := f.grant(t, f.a, u.ID, 90*day, 30*day)
	gB, hB := f.grant(t, f.b, u.ID, 90*day, 30*day)
	t1, t2 := f.now.Add(time.Minute), f.now.Add(2*time.Minute)
	// g1's chain: h0 was rotated, h1 is current.
	h1, _, err := f.rotate(f.a.ID, h0, f.now.Add(time.Second), 30*day)
	must(t, err, "RotateRefreshToken(before the revocation)")

	wantErr(t, errOf(f.s.RevokeGrant(f.ctx, f.b.ID, g1.ID, t1)), storage.ErrNotFound, "RevokeGrant(B, A's grant)")
	wantErr(t, errOf(f.s.RevokeGrant(f.ctx, f.a.ID, gB.ID, t1)), storage.ErrNotFound, "RevokeGrant(A, B's grant)")
	wantErr(t, errOf(f.s.RevokeGrant(f.ctx, f.a.ID, "missing", t1)), storage.ErrNotFound, "RevokeGrant(unknown)")
	if g := f.grantByID(t, f.a.ID, g1.ID); g.RevokedAt != nil {
		t.Fatal("RevokeGrant through B's ID revoked A's grant")
	}
	if g := f.grantByID(t, f.b.ID, gB.ID); g.RevokedAt != nil {
		t.Fatal("RevokeGrant through A's ID revoked B's grant")
	}

	must(t, errOf(f.s.RevokeGrant(f.ctx, f.a.ID, g1.ID, t1)), "RevokeGrant")
	got := f.grantByID(t, f.a.ID, g1.ID)
	if got.RevokedAt == nil {
		t.Fatal("RevokeGrant left RevokedAt nil")
	}
	diff(t, "RevokedAt", t1, *got.RevokedAt)
	must(t, errOf(f.s.RevokeGrant(f.ctx, f.a.ID, g1.ID, t2)), "RevokeGrant(again)")
	diff(t, "RevokedAt after a second revoke", t1, *f.grantByID(t, f.a.ID, g1.ID).RevokedAt)

	// Every token of the grant, the current one and the rotated one, reads
	// as revoked when the grant was.
	for name, h := range map[string][]byte{"current": h1, "rotated": h0} {
		if rt := f.token(t, f.a.ID, h); rt.RevokedAt == nil {
			t.Errorf("RevokeGrant left its %s refresh token unrevoked", name)
		} else {
			diff(t, "RevokedAt of the grant's "+name+" refresh token", t1, *rt.RevokedAt)
		}
	}
	_, _, err = f.rotate(f.a.ID, h1, t2, 30*day)
	wantErr(t, err, storage.ErrNotFound, "RotateRefreshToken(current token of a revoked grant)")
	if rt := f.token(t, f.a.ID, h1); rt.UsedAt != nil {
		t.Error("a refused rotation of a revoked grant's token marked it used")
	}
	// Site B sees neither token.
	_, _, err = f.s.RefreshTokenByHash(f.ctx, f.b.ID, h1)
	wantErr(t, err, storage.ErrNotFound, "RefreshTokenByHash(B, A's revoked token)")

	// Other grants, at A and at B, still work.
	_, _, err = f.rotate(f.a.ID, h2, t2, 30*day)
	must(t, err, "RotateRefreshToken(A's other grant)")
	_, _, err = f.rotate(f.b.ID, hB, t2, 30*day)
	must(t, err, "RotateRefreshToken(B's grant)")
}

// A grant, its refresh token and its audit event commit together or not at
// all.
func testGrantWithAudit(t *testing.T, f *fixture) {
	u := f.user(t, "u@example.test")
	g := &storage.Grant{ID: "grt_audited", SiteID: f.a.ID, ClientID: "c", UserID: u.ID, Scopes: []string{"openid"},
		Resource: "https://a.school.test", AuthTime: f.now, CreatedAt: f.now, ExpiresAt: f.now.Add(90 * day), LastUsedAt: f.now}
	rt := &storage.RefreshToken{TokenHash: []byte("audited-token-hash-0123456789abc"), CreatedAt: f.now, ExpiresAt: f.now.Add(30 * day)}
	e := &storage.AuditEvent{SiteID: f.a.ID, Actor: u.ID, Action: "grant.created", Target: "c", IP: "192.0.2.1", Details: map[string]any{"grant": g.ID}}
	must(t, f.s.CreateGrant(f.ctx, g, rt, e), "CreateGrant with audit")
	events, err := f.s.ListAudit(f.ctx, f.a.ID, 0, 10)
	must(t, err, "ListAudit")
	if len(events) != 1 || events[0].Action != "grant.created" || events[0].Details["grant"] != g.ID || events[0].IP != "192.0.2.1" {
		t.Fatalf("audit after CreateGrant = %+v; want the one grant.created event", events)
	}
	if _, _, err := f.s.RefreshTokenByHash(f.ctx, f.a.ID, rt.TokenHash); err != nil {
		t.Fatalf("refresh token of the new grant: %v", err)
	}
	// A failing insert (the grant ID is taken) records nothing.
	g2 := *g
	rt2 := &storage.RefreshToken{TokenHash: []byte("another-token-hash-0123456789abc"), CreatedAt: f.now, ExpiresAt: f.now.Add(30 * day)}
	e2 := &storage.AuditEvent{SiteID: f.a.ID, Actor: u.ID, Action: "grant.created", Target: "c"}
	if err := f.s.CreateGrant(f.ctx, &g2, rt2, e2); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("CreateGrant with a taken ID: %v; want ErrConflict", err)
	}
	events, _ = f.s.ListAudit(f.ctx, f.a.ID, 0, 10)
	if len(events) != 1 {
		t.Fatalf("a failed CreateGrant left audit events: %+v", events)
	}
	if _, _, err := f.s.RefreshTokenByHash(f.ctx, f.a.ID, rt2.TokenHash); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("a failed CreateGrant left its refresh token: %v", err)
	}
}

// Abandoned dynamic registrations are purged; used ones, other sources and
// recent ones stay.
func testPurgeUnusedClients(t *testing.T, f *fixture) {
	mk := func(site *storage.Site, id, source string) {
		c := &storage.Client{SiteID: &site.ID, ClientID: id, Name: id, Audience: storage.AudienceMember, Type: storage.ClientPublic,
			ApplicationType: "native", RedirectURIs: []string{"http://127.0.0.1/cb"}, Scopes: []string{"openid"}, Source: source}
		must(t, f.s.CreateClient(f.ctx, c), "CreateClient "+id)
	}
	mk(f.a, "dcr-unused", storage.SourceDCR)
	mk(f.a, "dcr-used", storage.SourceDCR)
	mk(f.b, "dcr-unused-b", storage.SourceDCR)
	mk(f.a, "admin-unused", storage.SourceAdmin)
	must(t, f.s.TouchClient(f.ctx, f.a.ID, "dcr-used", time.Now()), "TouchClient")
	// TouchClient through the other site changes nothing.
	must(t, f.s.TouchClient(f.ctx, f.b.ID, "dcr-unused", time.Now()), "TouchClient(B, A's client)")

	n, err := f.s.PurgeUnusedClients(f.ctx, storage.SourceDCR, time.Now().Add(-time.Hour))
	must(t, err, "PurgeUnusedClients(an hour ago)")
	if n != 0 {
		t.Fatalf("purged %d clients created within the hour; want 0", n)
	}
	n, err = f.s.PurgeUnusedClients(f.ctx, storage.SourceDCR, time.Now().Add(time.Hour))
	must(t, err, "PurgeUnusedClients")
	if n != 2 {
		t.Fatalf("purged %d; want the two unused DCR clients (one per site)", n)
	}
	for _, tc := range []struct {
		site *storage.Site
		id   string
		gone bool
	}{{f.a, "dcr-unused", true}, {f.b, "dcr-unused-b", true}, {f.a, "dcr-used", false}, {f.a, "admin-unused", false}} {
		_, err := f.s.ClientByID(f.ctx, tc.site.ID, tc.id)
		if gone := errors.Is(err, storage.ErrNotFound); gone != tc.gone {
			t.Errorf("%s after purge: %v; want gone=%v", tc.id, err, tc.gone)
		}
	}
}

func testRevokedGrants(t *testing.T, f *fixture) {
	u := f.user(t, "u@example.test")
	gA, _ := f.grant(t, f.a, u.ID, 90*day, 30*day)
	f.grant(t, f.a, u.ID, 90*day, 30*day) // never revoked
	gB, _ := f.grant(t, f.b, u.ID, 90*day, 30*day)
	tA, tB := f.now.Add(time.Minute), f.now.Add(3*time.Minute)
	must(t, errOf(f.s.RevokeGrant(f.ctx, f.a.ID, gA.ID, tA)), "RevokeGrant(A)")
	must(t, errOf(f.s.RevokeGrant(f.ctx, f.b.ID, gB.ID, tB)), "RevokeGrant(B)")

	byID := cmpopts.SortSlices(func(x, y storage.RevokedGrant) bool { return x.GrantID < y.GrantID })
	revA := storage.RevokedGrant{SiteID: f.a.ID, GrantID: gA.ID, RevokedAt: tA}
	revB := storage.RevokedGrant{SiteID: f.b.ID, GrantID: gB.ID, RevokedAt: tB}
	tests := []struct {
		name  string
		site  *storage.Site
		since time.Time
		want  []storage.RevokedGrant
	}{
		{"A", f.a, f.now, []storage.RevokedGrant{revA}},
		{"B", f.b, f.now, []storage.RevokedGrant{revB}},
		{"A after A's", f.a, f.now.Add(2 * time.Minute), nil},
		{"B after A's", f.b, f.now.Add(2 * time.Minute), []storage.RevokedGrant{revB}},
		{"B after both", f.b, f.now.Add(4 * time.Minute), nil},
	}
	for _, tt := range tests {
		got, err := f.s.RevokedGrants(f.ctx, tt.site.ID, tt.since)
		must(t, err, "RevokedGrants")
		if d := cmp.Diff(tt.want, got, append(cmpOpts, byID)...); d != "" {
			t.Errorf("RevokedGrants(%s) mismatch (-want +got):\n%s", tt.name, d)
		}
	}
}

func testRevokedTokens(t *testing.T, f *fixture) {
	exp := f.now.Add(time.Hour)
	must(t, errOf(f.s.RevokeToken(f.ctx, &storage.RevokedToken{SiteID: f.a.ID, JTI: "jti-1", ExpiresAt: exp, RevokedAt: f.now})), "RevokeToken")
	must(t, errOf(f.s.RevokeToken(f.ctx, &storage.RevokedToken{SiteID: f.a.ID, JTI: "jti-1", ExpiresAt: exp, RevokedAt: f.now})), "RevokeToken again (idempotent)")
	must(t, errOf(f.s.RevokeToken(f.ctx, &storage.RevokedToken{SiteID: f.a.ID, JTI: "jti-old", ExpiresAt: f.now.Add(-time.Minute), RevokedAt: f.now})), "RevokeToken(expired)")
	for _, tc := range []struct {
		site *storage.Site
		jti  string
		want bool
	}{{f.a, "jti-1", true}, {f.b, "jti-1", false}, {f.a, "jti-2", false}} {
		got, err := f.s.TokenRevoked(f.ctx, tc.site.ID, tc.jti)
		must(t, err, "TokenRevoked")
		if got != tc.want {
			t.Errorf("TokenRevoked(%s, %s) = %v; want %v", tc.site.Slug, tc.jti, got, tc.want)
		}
	}
	live, err := f.s.RevokedTokens(f.ctx, f.a.ID, f.now)
	must(t, err, "RevokedTokens(A)")
	if len(live) != 1 || live[0].JTI != "jti-1" || !live[0].ExpiresAt.Equal(exp.Truncate(time.Microsecond)) && live[0].ExpiresAt.Sub(exp).Abs() > time.Millisecond {
		t.Errorf("RevokedTokens(A) = %+v; want only the unexpired jti-1", live)
	}
	other, err := f.s.RevokedTokens(f.ctx, f.b.ID, f.now)
	must(t, err, "RevokedTokens(B)")
	if len(other) != 0 {
		t.Errorf("RevokedTokens(B) = %+v; want none (A's revocations are A's)", other)
	}
}

func testTouchGrant(t *testing.T, f *fixture) {
	u := f.user(t, "u@example.test")
	g, _ := f.grant(t, f.a, u.ID, 90*day, 30*day)
	gB, _ := f.grant(t, f.b, u.ID, 90*day, 30*day)

	t1 := f.now.Add(5 * time.Minute)
	must(t, f.s.TouchGrant(f.ctx, f.a.ID, g.ID, t1), "TouchGrant")
	diff(t, "LastUsedAt after TouchGrant", t1, f.grantByID(t, f.a.ID, g.ID).LastUsedAt)
	diff(t, "B's LastUsedAt after touching A's grant", gB.LastUsedAt, f.grantByID(t, f.b.ID, gB.ID).LastUsedAt)

	if err := f.s.TouchGrant(f.ctx, f.b.ID, g.ID, t1.Add(time.Hour)); err != nil && !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("TouchGrant(B, A's grant): %v; want nil or ErrNotFound", err)
	}
	diff(t, "A's LastUsedAt after touching it through B", t1, f.grantByID(t, f.a.ID, g.ID).LastUsedAt)
}

func testListGrants(t *testing.T, f *fixture) {
	u1 := f.user(t, "u1@example.test")
	u2 := f.user(t, "u2@example.test")
	g1, _ := f.grant(t, f.a, u1.ID, 90*day, 30*day)
	g2, _ := f.grant(t, f.a, u2.ID, 90*day, 30*day)
	g3, _ := f.grant(t, f.a, u1.ID, 90*day, 30*day)
	g4, _ := f.grant(t, f.b, u1.ID, 90*day, 30*day)
	must(t, errOf(f.s.RevokeGrant(f.ctx, f.a.ID, g3.ID, f.now)), "RevokeGrant")

	tests := []struct {
		name           string
		site           *storage.Site
		user           string
		includeRevoked bool
		want           []string
	}{
		{"A, live", f.a, "", false, []string{g1.ID, g2.ID}},
		{"A, all", f.a, "", true, []string{g1.ID, g2.ID, g3.ID}},
		{"A, u1 live", f.a, u1.ID, false, []string{g1.ID}},
		{"A, u1 all", f.a, u1.ID, true, []string{g1.ID, g3.ID}},
		{"A, u2 all", f.a, u2.ID, true, []string{g2.ID}},
		{"B, all", f.b, "", true, []string{g4.ID}},
		{"B, u2 all", f.b, u2.ID, true, nil},
	}
	for _, tt := range tests {
		gs, err := f.s.ListGrants(f.ctx, tt.site.ID, tt.user, tt.includeRevoked)
		must(t, err, "ListGrants")
		var ids []string
		for _, g := range gs {
			ids = append(ids, g.ID)
		}
		slices.Sort(ids)
		slices.Sort(tt.want)
		diff(t, "ListGrants("+tt.name+")", tt.want, ids)
	}
	gs, err := f.s.ListGrants(f.ctx, f.b.ID, u1.ID, false)
	must(t, err, "ListGrants")
	diff(t, "ListGrants(B, u1) records", []storage.Grant{*g4}, gs)
}

func testLiveGrants(t *testing.T, f *fixture) {
	u1 := f.user(t, "u1@example.test")
	u2 := f.user(t, "u2@example.test")
	// Seven live grants at A, one a second apart (newest last), alternating
	// between two clients and two people; one revoked, one past its limit
	// and one at B must never be listed or counted.
	var live []*storage.Grant
	for i := range 7 {
		user, client := u1.ID, "app"
		if i%2 == 1 {
			user, client = u2.ID, "other"
		}
		g := &storage.Grant{ID: newID(), SiteID: f.a.ID, ClientID: client, UserID: user, Scopes: []string{"account:read"},
			Resource: f.a.Origin, AuthTime: f.now, CreatedAt: f.now.Add(time.Duration(i) * time.Second),
			ExpiresAt: f.now.Add(90 * day), LastUsedAt: f.now}
		must(t, f.s.CreateGrant(f.ctx, g, &storage.RefreshToken{TokenHash: newHash(), CreatedAt: f.now, ExpiresAt: f.now.Add(day)}), "CreateGrant")
		live = append(live, g)
	}
	revoked, _ := f.grant(t, f.a, u1.ID, 90*day, day)
	must(t, errOf(f.s.RevokeGrant(f.ctx, f.a.ID, revoked.ID, f.now)), "RevokeGrant")
	expired, _ := f.grant(t, f.a, u2.ID, time.Hour, time.Hour) // past its limit at `at`, created with live[0]
	f.grant(t, f.b, u1.ID, 90*day, day)
	at := f.now.Add(2 * time.Hour)

	ids := func(gs []storage.Grant) []string {
		out := []string{}
		for _, g := range gs {
			out = append(out, g.ID)
		}
		return out
	}
	newest := func(idx ...int) []string {
		out := []string{}
		for _, i := range idx {
			out = append(out, live[i].ID)
		}
		return out
	}
	tests := []struct {
		name      string
		site      *storage.Site
		q         storage.GrantQuery
		want      []string
		wantTotal int
	}{
		{"first page", f.a, storage.GrantQuery{At: at, Limit: 3}, newest(6, 5, 4), 7},
		{"second page", f.a, storage.GrantQuery{At: at, Offset: 3, Limit: 3}, newest(3, 2, 1), 7},
		{"last page", f.a, storage.GrantQuery{At: at, Offset: 6, Limit: 3}, newest(0), 7},
		{"past the end", f.a, storage.GrantQuery{At: at, Offset: 9, Limit: 3}, []string{}, 7},
		{"no limit", f.a, storage.GrantQuery{At: at}, newest(6, 5, 4, 3, 2, 1, 0), 7},
		{"one client", f.a, storage.GrantQuery{At: at, ClientID: "other", Limit: 2}, newest(5, 3), 3},
		{"one person", f.a, storage.GrantQuery{At: at, UserID: u1.ID}, newest(6, 4, 2, 0), 4},
		{"one person and client", f.a, storage.GrantQuery{At: at, UserID: u1.ID, ClientID: "other"}, []string{}, 0},
		{"before the short one ends", f.a, storage.GrantQuery{At: f.now.Add(time.Minute), UserID: u2.ID}, append(newest(5, 3, 1), expired.ID), 4},
		{"B", f.b, storage.GrantQuery{At: at}, nil, 1},
	}
	for _, tt := range tests {
		gs, total, err := f.s.LiveGrants(f.ctx, tt.site.ID, tt.q)
		must(t, err, "LiveGrants("+tt.name+")")
		diff(t, "LiveGrants("+tt.name+") total", tt.wantTotal, total)
		if tt.want == nil {
			continue
		}
		diff(t, "LiveGrants("+tt.name+")", tt.want, ids(gs))
	}
	counts, err := f.s.LiveGrantCounts(f.ctx, f.a.ID, at)
	must(t, err, "LiveGrantCounts(A)")
	diff(t, "LiveGrantCounts(A)", map[string]int{"app": 4, "other": 3}, counts)
	counts, err = f.s.LiveGrantCounts(f.ctx, f.b.ID, at)
	must(t, err, "LiveGrantCounts(B)")
	diff(t, "LiveGrantCounts(B)", map[string]int{"app": 1}, counts)
}

func testConsent(t *testing.T, f *fixture) {
	u := f.user(t, "u@example.test")
	v := f.user(t, "v@example.test")
	scopes := func(site *storage.Site, userID, clientID string) []string {
		t.Helper()
		c, err := f.s.Consent(f.ctx, site.ID, userID, clientID)
		if errors.Is(err, storage.ErrNotFound) {
			return nil
		}
		must(t, err, "Consent")
		if c.SiteID != site.ID || c.UserID != userID || c.ClientID != clientID {
			t.Errorf("Consent(%s, %s, %s) returned %+v", site.Slug, userID, clientID, c)
		}
		return c.Scopes
	}

	_, err := f.s.Consent(f.ctx, f.a.ID, u.ID, "app")
	wantErr(t, err, storage.ErrNotFound, "Consent(none given)")

	must(t, f.s.SaveConsent(f.ctx, &storage.Consent{SiteID: f.a.ID, UserID: u.ID, ClientID: "app", Scopes: []string{"openid", "profile"}}), "SaveConsent")
	diff(t, "A's consent", []string{"openid", "profile"}, scopes(f.a, u.ID, "app"))
	_, err = f.s.Consent(f.ctx, f.b.ID, u.ID, "app")
	wantErr(t, err, storage.ErrNotFound, "Consent(B, consent given at A)")

	// Saving again replaces the scopes; it does not merge them.
	must(t, f.s.SaveConsent(f.ctx, &storage.Consent{SiteID: f.a.ID, UserID: u.ID, ClientID: "app", Scopes: []string{"account:read"}}), "SaveConsent(again)")
	diff(t, "A's consent after replace", []string{"account:read"}, scopes(f.a, u.ID, "app"))

	must(t, f.s.SaveConsent(f.ctx, &storage.Consent{SiteID: f.b.ID, UserID: u.ID, ClientID: "app", Scopes: []string{"email"}}), "SaveConsent(B)")
	diff(t, "B's consent", []string{"email"}, scopes(f.b, u.ID, "app"))
	diff(t, "A's consent after B's", []string{"account:read"}, scopes(f.a, u.ID, "app"))
	diff(t, "another user's consent", []string(nil), scopes(f.a, v.ID, "app"))
	diff(t, "another client's consent", []string(nil), scopes(f.a, u.ID, "other"))
}

// ---- audit and health ------------------------------------------------------

func testAudit(t *testing.T, f *fixture) {
	var events []*storage.AuditEvent
	record := func(site *storage.Site, name string) *storage.AuditEvent {
		e := &storage.AuditEvent{
			SiteID:    site.ID,
			Actor:     "user:" + name,
			Action:    "client.created",
			Target:    "client:" + name,
			IP:        "203.0.113.7",
			Details:   map[string]any{"name": name},
			CreatedAt: f.now.Add(time.Duration(len(events)) * time.Second),
		}
		must(t, f.s.RecordAudit(f.ctx, e), "RecordAudit("+name+")")
		if e.ID == 0 {
			t.Fatalf("RecordAudit(%s) left ID 0", name)
		}
		events = append(events, e)
		return e
	}
	a1, b1, a2, a3, b2, a4, a5 := record(f.a, "a1"), record(f.b, "b1"), record(f.a, "a2"), record(f.a, "a3"), record(f.b, "b2"), record(f.a, "a4"), record(f.a, "a5")

	list := func(e ...*storage.AuditEvent) []storage.AuditEvent {
		out := make([]storage.AuditEvent, len(e))
		for i := range e {
			out[i] = *e[i]
		}
		return out
	}
	tests := []struct {
		name   string
		site   *storage.Site
		before int64
		limit  int
		want   []storage.AuditEvent
	}{
		{"A, newest", f.a, 0, 10, list(a5, a4, a3, a2, a1)},
		{"B, newest", f.b, 0, 10, list(b2, b1)},
		{"A, page 1", f.a, 0, 2, list(a5, a4)},
		{"A, page 2", f.a, a4.ID, 2, list(a3, a2)},
		{"A, page 3", f.a, a2.ID, 2, list(a1)},
		{"A, past the end", f.a, a1.ID, 2, nil},
		// A cursor taken from B's events still lists only A's.
		{"A, before B's event", f.a, b2.ID, 10, list(a3, a2, a1)},
	}
	for _, tt := range tests {
		got, err := f.s.ListAudit(f.ctx, tt.site.ID, tt.before, tt.limit)
		must(t, err, "ListAudit")
		diff(t, "ListAudit("+tt.name+")", tt.want, got)
	}
}

func testPing(t *testing.T, f *fixture) {
	must(t, f.s.Ping(f.ctx), "Ping")
	must(t, f.s.Close(), "Close")
	if err := f.s.Ping(f.ctx); err == nil {
		t.Error("Ping after Close = nil; want an error")
	}
}
