package adminapi

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/lectern/lectern/authserver/bearer"
	"github.com/lectern/lectern/internal/platform"
	"github.com/lectern/lectern/limits"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// BasePath is where the API is mounted; the document's server URL is the
// site's origin followed by it.
const BasePath = "/api/v1"

// UploadsPath is where uploaded files are served, publicly, by key.
const UploadsPath = "/uploads"

// Store is what the handlers read and write: the admin records and the
// operator reads, people and their roles, the site row and the audit log.
// Role and site changes go through the platform, which clears caches and
// tells the other replicas.
type Store interface {
	storage.AdminStore
	ListStudents(ctx context.Context, site tenant.ID, search string, p storage.Page) ([]storage.StudentView, int, error)
	RecentOrders(ctx context.Context, site tenant.ID, p storage.Page) ([]storage.OrderView, int, error)
	SalesSummary(ctx context.Context, site tenant.ID, from, to time.Time) (*storage.SalesSummary, error)
	ListEnrollments(ctx context.Context, site tenant.ID, userID string, p storage.Page) ([]storage.EnrollmentView, int, error)
	UserByID(ctx context.Context, id string) (*storage.User, error)
	UserByEmail(ctx context.Context, email string) (*storage.User, error)
	RolesAt(ctx context.Context, site tenant.ID, userID string) ([]string, error)
	SiteByID(ctx context.Context, id tenant.ID) (*storage.Site, error)
	RecordAudit(ctx context.Context, e *storage.AuditEvent) error
	InvitationByID(ctx context.Context, site tenant.ID, id int64) (*storage.Invitation, error)
	ListInvitations(ctx context.Context, site tenant.ID, p storage.Page) ([]storage.Invitation, int, error)
}

// Authenticator verifies the bearer token of a request at its site
// (*bearer.Verifier).
type Authenticator interface {
	Authenticate(r *http.Request) (*bearer.Token, error)
}

// Options configures New. Store, Platform, Verifier, Revoker, Cache and
// Files are required.
type Options struct {
	Store    Store
	Platform *platform.Platform
	Verifier Authenticator
	// Revoker revokes the grants of deleted applications (*bearer.Verifier).
	Revoker platform.Revoker
	// Cache keeps idempotency records and is told about role changes.
	Cache storage.Cache
	// Files keeps uploaded files.
	Files  FileStore
	Logger *slog.Logger
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// MaxUploadBytes caps an uploaded file. Default DefaultMaxUploadBytes.
	MaxUploadBytes int64
	// Limits are the platform's limits (GET/PUT /limits). Nil: the
	// built-in defaults.
	Limits *limits.Config
	// Brand is told when a site's appearance changes, so its pages show
	// it at once. Nil: they show it when the kept look expires.
	Brand interface{ Forget(tenant.ID) }
}

// Handler serves the admin API, /openapi.json and uploaded files.
type Handler struct {
	store     Store
	platform  *platform.Platform
	verifier  Authenticator
	revoker   platform.Revoker
	cache     storage.Cache
	files     FileStore
	log       *slog.Logger
	now       func() time.Time
	maxUpload int64
	doc       *document
	limits    *limits.Config
	brand     interface{ Forget(tenant.ID) }
}

var _ StrictServerInterface = (*Handler)(nil)

// New returns a Handler. It panics when a required option is missing: that
// is a wiring mistake.
func New(o Options) *Handler {
	if o.Store == nil || o.Platform == nil || o.Verifier == nil || o.Revoker == nil || o.Cache == nil || o.Files == nil {
		panic("adminapi: New needs Store, Platform, Verifier, Revoker, Cache and Files")
	}
	h := &Handler{
		store: o.Store, platform: o.Platform, verifier: o.Verifier, revoker: o.Revoker, cache: o.Cache,
		files: o.Files, log: o.Logger, now: o.Now, maxUpload: o.MaxUploadBytes, doc: newDocument(), limits: o.Limits, brand: o.Brand,
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	if h.now == nil {
		h.now = time.Now
	}
	if h.maxUpload <= 0 {
		h.maxUpload = DefaultMaxUploadBytes
	}
	return h
}

// Router is where Register adds routes: *echo.Echo.
type Router interface {
	Match(methods []string, path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) []*echo.Route
	Group(prefix string, m ...echo.MiddlewareFunc) *echo.Group
}

// getHead are the methods of a document: HEAD wherever GET (RFC 9110
// §9.3.2; net/http sends no body for HEAD).
var getHead = []string{http.MethodGet, http.MethodHead}

// Register mounts the API under BasePath, every operation behind the
// guard (token, scope, role, idempotency, problem answers), the document at
// openAPIPath and uploaded files under UploadsPath.
func (h *Handler) Register(e Router, openAPIPath string) {
	g := e.Group(BasePath, h.guard)
	RegisterHandlersWithOptions(g, NewStrictHandler(h, []StrictMiddlewareFunc{checkDates}), RegisterHandlersOptions{BaseURL: ""})
	e.Match(getHead, openAPIPath, echo.WrapHandler(http.HandlerFunc(h.OpenAPI)))
	e.Match(getHead, UploadsPath+"/:key", h.serveUpload)
}

// caller is who makes the request: the token's subject at the request's
// site, with the roles they hold there now.
type caller struct {
	site  *tenant.Site
	token *bearer.Token
	roles []string
	ip    string
}

type callerKey struct{}

func withCaller(ctx context.Context, c *caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// callerOf returns the caller the guard put in ctx. Handlers run only
// behind the guard, so it is always there.
func callerOf(ctx context.Context) *caller {
	c, _ := ctx.Value(callerKey{}).(*caller)
	if c == nil {
		panic("adminapi: handler called without the guard")
	}
	return c
}

func siteOf(ctx context.Context) tenant.ID { return callerOf(ctx).site.ID }

// audit records a write; a failure is logged, never fatal: the write has
// happened.
func (h *Handler) audit(ctx context.Context, action, target string, details map[string]any) {
	c := callerOf(ctx)
	e := &storage.AuditEvent{SiteID: c.site.ID, Actor: c.token.Subject, Action: action, Target: target,
		IP: c.ip, Details: details, CreatedAt: h.now()}
	if e.Details == nil {
		e.Details = map[string]any{}
	}
	e.Details["client_id"] = c.token.ClientID
	if err := h.store.RecordAudit(ctx, e); err != nil {
		h.log.WarnContext(ctx, "audit event not recorded", "action", action, "target", target, "err", err)
	}
}
