package demo_test

import (
	"crypto/rand"
	"errors"
	"log/slog"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lectern/lectern/authserver/keys"
	"github.com/lectern/lectern/authserver/password"
	"github.com/lectern/lectern/internal/brand"
	"github.com/lectern/lectern/internal/demo"
	"github.com/lectern/lectern/internal/platform"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/storage/cache"
	"github.com/lectern/lectern/storage/sqlstore"
	"github.com/lectern/lectern/storage/sqlstore/sqltest"
	"github.com/lectern/lectern/tenant"
)

// seedNow is the seed's clock; a port other than the default shows that
// the origins follow the port.
var seedNow = time.Date(2026, 5, 4, 10, 30, 0, 0, time.UTC)

const port = 18080

type seeded struct {
	store *sqlstore.Store
	sum   *demo.Summary
	p     *platform.Platform
}

func seed(t *testing.T, store *sqlstore.Store) *seeded {
	t.Helper()
	kek := make([]byte, keys.KEKSize)
	_, _ = rand.Read(kek)
	km, err := keys.NewManager(store, kek, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := cache.NewMemory(nil)
	t.Cleanup(func() { _ = c.Close() })
	p := &platform.Platform{Store: store, Keys: km, Cache: c, Logger: slog.New(slog.NewTextHandler(t.Output(), nil)),
		PasswordParams: password.Params{Memory: 1024, Time: 1, Threads: 1, KeyLen: 32, SaltLen: 16}}
	sum, err := demo.Seed(t.Context(), p, store, port, seedNow)
	if err != nil {
		t.Fatal(err)
	}
	return &seeded{store: store, sum: sum, p: p}
}

// The README's demo table, row by row.
func TestSeedMatchesTheREADME(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, store *sqlstore.Store) {
		s := seed(t, store)
		t.Run("sites", func(t *testing.T) { testSites(t, s) })
		t.Run("users and roles", func(t *testing.T) { testUsersAndRoles(t, s) })
		t.Run("clients", func(t *testing.T) { testClients(t, s) })
		t.Run("catalog", func(t *testing.T) { testCatalog(t, s) })
		t.Run("student at Demo Academy", func(t *testing.T) { testAcademyStudent(t, s) })
		t.Run("student at Open School", func(t *testing.T) { testOpenStudent(t, s) })
		t.Run("seeding again", func(t *testing.T) { testSeedAgain(t, s) })
	})
}

type siteRow struct {
	Name, Origin      string
	Variant           tenant.Variant
	IDTokens, MCPBeta bool
	ResolvesAtOwnHost bool
	CanSign           bool
}

func testSites(t *testing.T, s *seeded) {
	got := map[string]siteRow{}
	for _, slug := range []string{demo.AcademySlug, demo.OpenSlug} {
		site, err := s.store.SiteBySlug(t.Context(), slug)
		if err != nil {
			t.Fatalf("site %s: %v", slug, err)
		}
		resolved, _ := s.store.LookupHost(t.Context(), site.Tenant().Host())
		_, signErr := s.p.Keys.SigningKey(t.Context(), site.ID)
		got[slug] = siteRow{
			Name: site.Name, Origin: site.Origin, Variant: site.RegistrationVariant,
			IDTokens: site.IDTokensEnabled, MCPBeta: site.MCPConnectionsBeta,
			ResolvesAtOwnHost: resolved != nil && resolved.ID == site.ID, CanSign: signErr == nil,
		}
	}
	want := map[string]siteRow{
		// Variant A (vendor platforms + CIMD), id_tokens on, "MCP connections" beta on.
		demo.AcademySlug: {"Demo Academy", "http://localhost:18080", tenant.VariantVendor, true, true, true, true},
		// Variant B (open loopback registration), id_tokens on.
		demo.OpenSlug: {"Open School", "http://127.0.0.1:18080", tenant.VariantOpen, true, false, true, true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sites (-want +got):\n%s", diff)
	}
	if s.sum.Academy.Slug != demo.AcademySlug || s.sum.Open.Slug != demo.OpenSlug {
		t.Errorf("the summary names %s and %s", s.sum.Academy.Slug, s.sum.Open.Slug)
	}
}

func testUsersAndRoles(t *testing.T, s *seeded) {
	a, o := s.sum.Academy.ID, s.sum.Open.ID
	for _, tc := range []struct {
		email, pw string
		academy   []string
		open      []string
	}{
		{"owner@demo.test", "demo-owner-pass", []string{storage.RoleOwner}, []string{storage.RoleOwner}},
		{"lecturer@demo.test", "demo-lecturer-pass", []string{storage.RoleLecturer}, nil},
		{"student@demo.test", "demo-student-pass", []string{storage.RoleStudent}, []string{storage.RoleStudent}},
		{"outsider@demo.test", "demo-outsider-pass", nil, nil},
	} {
		t.Run(tc.email, func(t *testing.T) {
			u, err := s.store.UserByEmail(t.Context(), tc.email)
			if err != nil {
				t.Fatal(err)
			}
			if err := password.Verify(tc.pw, u.PasswordHash); err != nil {
				t.Errorf("the README's password %q does not sign in: %v", tc.pw, err)
			}
			if s.sum.Users[tc.email] == nil || s.sum.Users[tc.email].ID != u.ID {
				t.Error("the summary does not name this user")
			}
			for _, site := range []struct {
				id   tenant.ID
				want []string
			}{{a, tc.academy}, {o, tc.open}} {
				roles, err := s.store.RolesAt(t.Context(), site.id, u.ID)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(site.want, roles, cmpEmpty); diff != "" {
					t.Errorf("roles at site %d (-want +got):\n%s", site.id, diff)
				}
			}
			all, err := s.store.SitesOfUser(t.Context(), u.ID)
			if err != nil {
				t.Fatal(err)
			}
			if want := len(slices.DeleteFunc([][]string{tc.academy, tc.open}, func(r []string) bool { return len(r) == 0 })); len(all) != want {
				t.Errorf("roles at %d sites, want %d", len(all), want)
			}
		})
	}
}

// cmpEmpty treats nil and empty slices alike.
var cmpEmpty = cmp.Comparer(func(x, y []string) bool { return slices.Equal(x, y) })

func testClients(t *testing.T, s *seeded) {
	loopback := []string{"http://127.0.0.1/callback"}
	for _, site := range []*storage.Site{s.sum.Academy, s.sum.Open} {
		c, err := s.store.ClientByID(t.Context(), site.ID, "demo-member-app")
		if err != nil {
			t.Fatalf("demo-member-app at %s: %v", site.Slug, err)
		}
		if c.SiteID == nil || *c.SiteID != site.ID || c.Type != storage.ClientPublic || c.Audience != storage.AudienceMember ||
			!slices.Equal(c.Scopes, []string{"openid", "profile", "email", "account:read", "account:write"}) || !slices.Equal(c.RedirectURIs, loopback) {
			t.Errorf("demo-member-app at %s: %+v", site.Slug, c)
		}
	}
	vendors, err := s.store.ListVendorIntegrations(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(vendors) != 1 || vendors[0].ClientID != "demo-vendor-platform" || !slices.Equal(vendors[0].ClientNames, []string{"Demo Vendor Platform"}) {
		t.Fatalf("vendor integrations %+v, want client_name \"Demo Vendor Platform\" → demo-vendor-platform", vendors)
	}
	for _, site := range []*storage.Site{s.sum.Academy, s.sum.Open} {
		c, err := s.store.ClientByID(t.Context(), site.ID, "demo-vendor-platform")
		if err != nil {
			t.Fatalf("demo-vendor-platform at %s: %v", site.Slug, err)
		}
		if c.SiteID != nil || c.Type != storage.ClientPublic || c.Source != storage.SourceVendor || !slices.Equal(c.RedirectURIs, loopback) {
			t.Errorf("demo-vendor-platform at %s: %+v; want a public platform-wide vendor client", site.Slug, c)
		}
	}
}

type catalogCounts struct {
	Published, Drafts                 int
	DraftSlugs                        []string
	Plans, Products, Services, Events int
	CoursesWithoutOutline             []string
}

func testCatalog(t *testing.T, s *seeded) {
	got := map[string]catalogCounts{}
	for _, site := range []*storage.Site{s.sum.Academy, s.sum.Open} {
		off, err := s.store.Offerings(t.Context(), site.ID, seedNow)
		if err != nil {
			t.Fatal(err)
		}
		all, _, err := s.store.ListCourses(t.Context(), site.ID, true, storage.Page{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		c := catalogCounts{Published: len(off.Courses), Drafts: len(all) - len(off.Courses), Plans: len(off.MembershipPlans),
			Products: len(off.DigitalProducts), Services: len(off.ConsultingServices), Events: len(off.Events)}
		for _, course := range all {
			if course.Status == storage.StatusDraft {
				c.DraftSlugs = append(c.DraftSlugs, course.Slug)
			}
		}
		// "published courses with sections, lectures and lecturers"
		for _, course := range off.Courses {
			d, err := s.store.CourseBySlug(t.Context(), site.ID, course.Slug)
			if err != nil {
				t.Fatal(err)
			}
			lectures := 0
			for _, sec := range d.Sections {
				lectures += len(sec.Lectures)
			}
			if len(d.Sections) == 0 || lectures == 0 || len(d.Lecturers) == 0 {
				c.CoursesWithoutOutline = append(c.CoursesWithoutOutline, course.Slug)
			}
		}
		got[site.Slug] = c
	}
	want := map[string]catalogCounts{
		// Five published courses, one draft (advanced-distributed-systems),
		// a membership plan, a digital product, a consulting service, two
		// upcoming public events.
		demo.AcademySlug: {Published: 5, Drafts: 1, DraftSlugs: []string{"advanced-distributed-systems"}, Plans: 1, Products: 1, Services: 1, Events: 2},
		// Two courses and a plan.
		demo.OpenSlug: {Published: 2, Plans: 1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("catalog (-want +got):\n%s", diff)
	}
}

func student(t *testing.T, s *seeded) string {
	t.Helper()
	u, err := s.store.UserByEmail(t.Context(), demo.StudentEmail)
	if err != nil {
		t.Fatal(err)
	}
	return u.ID
}

type enrollment struct {
	Slug     string
	Lifetime bool
}

func enrollments(t *testing.T, s *seeded, site tenant.ID, user string) []enrollment {
	t.Helper()
	rows, total, err := s.store.ListEnrollments(t.Context(), site, user, storage.Page{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if total != len(rows) {
		t.Errorf("total %d, %d rows", total, len(rows))
	}
	out := make([]enrollment, len(rows))
	for i, e := range rows {
		out[i] = enrollment{e.CourseSlug, e.ExpiresAt == nil}
		if e.ExpiresAt != nil && !e.ExpiresAt.After(seedNow) {
			t.Errorf("the expiring enrollment in %s has expired already (%v)", e.CourseSlug, e.ExpiresAt)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Slug < out[j].Slug })
	return out
}

// "enrolled in two courses (one lifetime, one expiring), one digital
// product, one consulting service, one event registration, three
// notifications (one read), notification subscriptions"
func testAcademyStudent(t *testing.T, s *seeded) {
	ctx, site, user := t.Context(), s.sum.Academy.ID, student(t, s)
	if diff := cmp.Diff([]enrollment{{"go-fundamentals", true}, {"web-security-essentials", false}}, enrollments(t, s, site, user)); diff != "" {
		t.Errorf("enrollments (-want +got):\n%s", diff)
	}
	products, _, err := s.store.ListProductPurchases(ctx, site, user, storage.Page{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(products) != 1 || products[0].Slug != "go-cheat-sheet" {
		t.Errorf("digital products %+v, want the one go-cheat-sheet", products)
	}
	services, _, err := s.store.ListConsultingPurchases(ctx, site, user, storage.Page{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(services) != 1 || services[0].Slug != "code-review-session" {
		t.Errorf("consulting services %+v, want the one code-review-session", services)
	}
	events, _, err := s.store.ListEventRegistrations(ctx, site, user, storage.Page{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 1 || events[0].EventSlug != "live-qa-go" || !events[0].StartsAt.After(seedNow) {
		t.Errorf("event registrations %+v, want the one upcoming live-qa-go", events)
	}
	notes, total, err := s.store.ListNotifications(ctx, site, user, storage.Page{Limit: 100}, false)
	if err != nil {
		t.Fatal(err)
	}
	read := 0
	for _, n := range notes {
		if n.ReadAt != nil {
			read++
		}
	}
	if total != 3 || len(notes) != 3 || read != 1 {
		t.Errorf("%d notifications (total %d), %d read; want three, one read", len(notes), total, read)
	}
	if unread, err := s.store.UnreadNotificationCount(ctx, site, user); err != nil || unread != 2 {
		t.Errorf("unread count %d, %v; want 2", unread, err)
	}
	subs, _, err := s.store.ListNotificationSubscriptions(ctx, site, user, storage.SubscriptionPage{})
	if err != nil {
		t.Fatal(err)
	}
	if len(subs) < 2 {
		t.Errorf("the student has %d notification subscriptions, want some", len(subs))
	}
}

// "at Open School enrolled in one course", and nothing else of Academy's.
func testOpenStudent(t *testing.T, s *seeded) {
	ctx, site, user := t.Context(), s.sum.Open.ID, student(t, s)
	if diff := cmp.Diff([]enrollment{{"python-basics", true}}, enrollments(t, s, site, user)); diff != "" {
		t.Errorf("enrollments (-want +got):\n%s", diff)
	}
	_, products, err := s.store.ListProductPurchases(ctx, site, user, storage.Page{Limit: 100})
	if err != nil || products != 0 {
		t.Errorf("%d digital products at Open School (%v), want none", products, err)
	}
	_, notes, err := s.store.ListNotifications(ctx, site, user, storage.Page{Limit: 100}, false)
	if err != nil || notes != 0 {
		t.Errorf("%d notifications at Open School (%v), want none", notes, err)
	}
}

// A second seed changes nothing and says so.
func testSeedAgain(t *testing.T, s *seeded) {
	sum, err := demo.Seed(t.Context(), s.p, s.store, port, seedNow)
	if !errors.Is(err, demo.ErrSeeded) {
		t.Fatalf("second seed: err = %v, want ErrSeeded", err)
	}
	if sum == nil || sum.Academy == nil || sum.Open == nil || sum.Academy.ID != s.sum.Academy.ID || sum.Open.ID != s.sum.Open.ID {
		t.Errorf("second seed's summary %+v does not name the existing sites", sum)
	}
	sites, err := s.store.ListSites(t.Context(), 0, 100)
	if err != nil || len(sites) != 2 {
		t.Errorf("%d sites after seeding twice (%v), want 2", len(sites), err)
	}
}

// The demo sites wear distinct themes that pass the contrast check.
func TestDemoAppearancesAreDistinctAndReadable(t *testing.T) {
	a, o := demo.Appearance(demo.AcademySlug), demo.Appearance(demo.OpenSlug)
	if a.PrimaryColor == o.PrimaryColor || a.BackgroundColor == o.BackgroundColor {
		t.Errorf("the demo sites look alike: %+v and %+v", a, o)
	}
	for _, x := range []storage.Appearance{a, o} {
		if e := brand.Check(brand.Colors{Primary: x.PrimaryColor, Accent: x.AccentColor, Background: x.BackgroundColor, Text: x.TextColor}); e != nil {
			t.Errorf("%+v: %v", x, e)
		}
	}
}
