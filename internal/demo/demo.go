package demo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lectern/lectern/authserver/scope"
	"github.com/lectern/lectern/internal/platform"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// The fixed values of the seed.
const (
	AcademySlug = "demo-academy"
	AcademyName = "Demo Academy"
	OpenSlug    = "open-school"
	OpenName    = "Open School"

	OwnerEmail       = "owner@demo.test"
	OwnerPassword    = "demo-owner-pass"
	LecturerEmail    = "lecturer@demo.test"
	LecturerPassword = "demo-lecturer-pass"
	StudentEmail     = "student@demo.test"
	StudentPassword  = "demo-student-pass"
	OutsiderEmail    = "outsider@demo.test"
	OutsiderPassword = "demo-outsider-pass"

	MemberClientID   = "demo-member-app"
	VendorClientName = "Demo Vendor Platform"
	VendorClientID   = "demo-vendor-platform"
	LoopbackRedirect = "http://127.0.0.1/callback"
	DraftCourseSlug  = "advanced-distributed-systems"
	DefaultPort      = 8080
	defaultCurrency  = "USD"
)

// AcademyOrigin and OpenOrigin are the demo origins for a port.
func AcademyOrigin(port int) string { return fmt.Sprintf("http://localhost:%d", port) }

// OpenOrigin is the origin of Open School for a port.
func OpenOrigin(port int) string { return fmt.Sprintf("http://127.0.0.1:%d", port) }

// ErrSeeded: the demo sites exist already.
var ErrSeeded = errors.New("demo: already seeded")

// Loader inserts fixture rows in one transaction (sqlstore.Store.Load).
type Loader interface {
	Load(ctx context.Context, records ...any) error
}

// Summary is what the seed created, for the start-up banner and tests.
type Summary struct {
	Academy, Open *storage.Site
	Users         map[string]*storage.User // by e-mail
}

// Seed creates the demo data for a server listening on port. It returns
// ErrSeeded (and a summary of the existing sites) if they exist.
func Seed(ctx context.Context, p *platform.Platform, load Loader, port int, now time.Time) (*Summary, error) {
	now = now.UTC().Truncate(time.Second)
	if existing, err := p.Store.SiteBySlug(ctx, AcademySlug); err == nil {
		sum := &Summary{Academy: existing, Users: map[string]*storage.User{}}
		sum.Open, _ = p.Store.SiteBySlug(ctx, OpenSlug)
		return sum, ErrSeeded
	} else if !errors.Is(err, storage.ErrNotFound) {
		return nil, err
	}
	sum := &Summary{Users: map[string]*storage.User{}}
	sum.Academy = &storage.Site{
		Slug: AcademySlug, Name: AcademyName, Origin: AcademyOrigin(port),
		RegistrationVariant: tenant.VariantVendor, IDTokensEnabled: true, MCPConnectionsBeta: true,
		Description: "Practical courses on software engineering, security and data, taught by working engineers.",
		Locale:      "en",
	}
	sum.Open = &storage.Site{
		Slug: OpenSlug, Name: OpenName, Origin: OpenOrigin(port),
		RegistrationVariant: tenant.VariantOpen, IDTokensEnabled: true,
		Description: "A small open school for Python and writing, open to any local MCP client.",
		Locale:      "en",
	}
	for _, s := range []*storage.Site{sum.Academy, sum.Open} {
		if err := p.CreateSite(ctx, s); err != nil {
			return nil, fmt.Errorf("demo: site %s: %w", s.Slug, err)
		}
		a := Appearance(s.Slug)
		a.SiteID = s.ID
		if err := p.Store.SaveAppearance(ctx, &a); err != nil {
			return nil, fmt.Errorf("demo: appearance of %s: %w", s.Slug, err)
		}
	}
	people := []struct{ email, name, pw string }{
		{OwnerEmail, "Olivia Owner", OwnerPassword},
		{LecturerEmail, "Maya Chen", LecturerPassword},
		{StudentEmail, "Sam Student", StudentPassword},
		{OutsiderEmail, "Otto Outsider", OutsiderPassword},
	}
	for _, person := range people {
		u, err := p.CreateUser(ctx, person.email, person.name, "", person.pw)
		if err != nil {
			return nil, fmt.Errorf("demo: user %s: %w", person.email, err)
		}
		sum.Users[person.email] = u
	}
	a, o := sum.Academy.ID, sum.Open.ID
	roles := []struct {
		site  tenant.ID
		email string
		role  string
	}{
		{a, OwnerEmail, storage.RoleOwner}, {o, OwnerEmail, storage.RoleOwner},
		{a, LecturerEmail, storage.RoleLecturer},
		{a, StudentEmail, storage.RoleStudent}, {o, StudentEmail, storage.RoleStudent},
	}
	for _, r := range roles {
		if err := p.Store.GrantRole(ctx, r.site, sum.Users[r.email].ID, r.role); err != nil {
			return nil, err
		}
	}
	for _, site := range []tenant.ID{a, o} {
		if err := p.Store.CreateClient(ctx, MemberClient(site)); err != nil {
			return nil, fmt.Errorf("demo: member client: %w", err)
		}
	}
	vendor := &storage.VendorIntegration{Name: VendorClientName, ClientNames: []string{VendorClientName}, ClientID: VendorClientID}
	vendorClient := &storage.Client{
		ClientID: VendorClientID, Name: VendorClientName, Audience: storage.AudienceOperator,
		Type: storage.ClientPublic, ApplicationType: "native", RedirectURIs: []string{LoopbackRedirect},
		Scopes: append([]string{scope.OpenID, scope.Profile, scope.Email}, scope.OperatorScopes()...),
		Source: storage.SourceVendor, Reviewed: true, CreatedBy: "demo-seed",
	}
	if err := p.Store.CreateVendorIntegration(ctx, vendor, vendorClient); err != nil {
		return nil, fmt.Errorf("demo: vendor integration: %w", err)
	}
	if err := loadCatalog(ctx, load, sum, now); err != nil {
		return nil, fmt.Errorf("demo: catalog: %w", err)
	}
	return sum, nil
}

// MemberClient is the demo-member-app of a site.
func MemberClient(site tenant.ID) *storage.Client {
	return &storage.Client{
		SiteID: &site, ClientID: MemberClientID, Name: "Demo Member App", Audience: storage.AudienceMember,
		Type: storage.ClientPublic, ApplicationType: "native", RedirectURIs: []string{LoopbackRedirect},
		Scopes: scope.MemberDefault(), Source: storage.SourceAdmin, Reviewed: true, CreatedBy: "demo-seed",
	}
}

// Appearance is the theme of a demo site, distinct for each so the
// difference shows on `make run`: the academy in indigo on white, the
// open school in forest green on cream. Both pass the contrast check of
// PUT /appearance (a test holds them to it).
func Appearance(slug string) storage.Appearance {
	if slug == OpenSlug {
		return storage.Appearance{PrimaryColor: "#166534", AccentColor: "#f97316", BackgroundColor: "#fffbeb", TextColor: "#1c1917"}
	}
	return storage.Appearance{PrimaryColor: "#3730a3", AccentColor: "#f59e0b", BackgroundColor: "#ffffff", TextColor: "#1e1b4b"}
}
