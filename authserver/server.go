package authserver

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/lectern/lectern/authserver/bearer"
	"github.com/lectern/lectern/authserver/clientmeta"
	"github.com/lectern/lectern/authserver/keys"
	"github.com/lectern/lectern/authserver/password"
	"github.com/lectern/lectern/authserver/throttle"
	"github.com/lectern/lectern/limits"
	"github.com/lectern/lectern/session"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
	"github.com/lectern/lectern/ui"
	"github.com/lectern/lectern/vocab"
)

// Lifetimes (DESIGN §10).
const (
	AccessTokenLifetime  = bearer.AccessTokenLifetime
	IDTokenLifetime      = 10 * time.Minute
	RefreshTokenLifetime = 30 * 24 * time.Hour
	GrantLifetime        = 90 * 24 * time.Hour
	CodeLifetime         = 60 * time.Second
	// pendingLifetime bounds how long a person may take to sign in and
	// consent before the authorization request is forgotten.
	pendingLifetime = 15 * time.Minute
)

// Options configures New.
type Options struct {
	Store    storage.Store
	Cache    storage.Cache
	Keys     *keys.Manager
	Verifier *bearer.Verifier
	UI       *ui.Renderer
	Logger   *slog.Logger
	// Platform creates clients (open registration): internal/platform's
	// *Platform.
	Platform ClientCreator
	// Sessions is the browser-session store, shared with the admin area
	// (web). Default: one over Cache.
	Sessions *session.Store
	// Clients resolves client IDs that are not rows of the site (Client ID
	// Metadata Documents). Optional.
	Clients ClientSource
	// Now is the clock; tests replace it.
	Now func() time.Time
	// Limits are the platform's rate limits and budgets, with each site's
	// overrides. Nil: the built-in defaults.
	Limits *limits.Config
	// Passwords bounds the password checks running at once, shared fairly
	// between sites. Default: one with the default options.
	Passwords *password.Gate
}

// ClientCreator validates and stores a client of a site, returning the
// secret of a confidential one (shown once). Validation failures are
// *clientmeta.MetadataError.
type ClientCreator interface {
	CreateClient(ctx context.Context, site tenant.ID, spec clientmeta.ClientSpec) (*storage.Client, string, error)
}

// Server is the authorization server of every site.
type Server struct {
	store    storage.Store
	cache    storage.Cache
	keys     *keys.Manager
	verifier *bearer.Verifier
	ui       *ui.Renderer
	logger   *slog.Logger
	platform ClientCreator
	extra    ClientSource
	vendors  *vendorCache
	now      func() time.Time

	codeLifetime time.Duration
	limits       *limits.Config
	// throttle counts failed sign-ins and bounds the password checks
	// (authserver/throttle); the account pages share it.
	throttle *throttle.Throttle

	clients  *clientCache
	outage   outageProfiles // claims while the cache is down (profile.go)
	sessions *session.Store
	// leased serves the shared limits checked on every request of a busy
	// key (token per client, anonymous authorizations per site).
	leased      *leasedLimiter
	tokenBudget *limits.Budgets
	op          http.Handler
	// opDirectOff sends every token request through op (tests compare
	// the two paths).
	opDirectOff atomic.Bool
}

// New returns a Server.
func New(o Options) (*Server, error) {
	if o.Store == nil || o.Cache == nil || o.Keys == nil || o.Verifier == nil || o.UI == nil || o.Logger == nil || o.Platform == nil {
		return nil, errors.New("authserver: Store, Cache, Keys, Verifier, UI, Logger and Platform are required")
	}
	s := &Server{
		store: o.Store, cache: o.Cache, keys: o.Keys, verifier: o.Verifier, ui: o.UI, logger: o.Logger, platform: o.Platform,
		extra: o.Clients, now: o.Now, limits: o.Limits,
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.throttle = throttle.New(throttle.Options{Cache: o.Cache, Limits: o.Limits, Gate: o.Passwords, Now: s.now, Logger: o.Logger})
	s.codeLifetime = CodeLifetime
	s.leased = newLeasedLimiter(o.Cache, 64, s.now)
	s.tokenBudget = limits.NewBudgets(s.limits, limits.TokenPerSite)
	s.vendors = &vendorCache{store: o.Store, now: s.now}
	s.clients = &clientCache{store: o.Store, ttl: 30 * time.Second, now: s.now, entries: map[clientKey]clientEntry{}}
	s.sessions = o.Sessions
	if s.sessions == nil {
		s.sessions = session.NewStore(o.Cache, s.now)
	}
	s.op = op.RegisterServer(&opServer{s: s}, op.Endpoints{
		Token:         op.NewEndpoint(vocab.TokenPath),
		Revocation:    op.NewEndpoint(vocab.RevocationPath),
		Introspection: op.NewEndpoint(vocab.IntrospectionPath),
	}, op.WithServerCORSOptions(nil), op.WithFallbackLogger(o.Logger))
	return s, nil
}

// Throttle is the sign-in throttle with the gate of Options.Passwords:
// the pages that ask a signed-in person for their password (web,
// accounts) take it, so their failures count with the sign-in form's and
// their checks wait for the same gate.
func (s *Server) Throttle() *throttle.Throttle { return s.throttle }

// InvalidateCIMD forgets the resolved Client ID Metadata Document clients
// (after an allowlist change), so the next request resolves them again.
func (s *Server) InvalidateCIMD() {
	if c, ok := s.extra.(*CIMDClients); ok {
		c.mu.Lock()
		clear(c.cache)
		clear(c.failed)
		c.mu.Unlock()
	}
}

// SetCodeLifetime changes how long authorization codes live (default
// CodeLifetime). Call it before serving; tests shorten it to see expiry.
func (s *Server) SetCodeLifetime(d time.Duration) { s.codeLifetime = d }

// SetDirectToken turns the direct token path (directToken) on or off;
// off, op serves every token request. Tests compare the two.
func (s *Server) SetDirectToken(on bool) { s.opDirectOff.Store(!on) }

// InvalidateClient drops a cached client (after a change broadcast);
// clientID "" drops every client of the site.
func (s *Server) InvalidateClient(site tenant.ID, clientID string) {
	s.clients.invalidate(site, clientID)
}

// InvalidateAllClients drops every cached client, of every site: after a
// gap in the change broadcasts, any of them may have changed.
func (s *Server) InvalidateAllClients() {
	s.clients.invalidateAll()
}

// client finds a client of site: a row of the site (or a platform-wide
// vendor client), else one the extra source resolves.
func (s *Server) client(ctx context.Context, site *tenant.Site, clientID string) (*Client, error) {
	return s.clientAdmitted(ctx, site, clientID, nil)
}

// admittingSource is a ClientSource whose resolution may cost an outbound
// fetch (CIMDClients), which admit may refuse first.
type admittingSource interface {
	ClientAdmitted(ctx context.Context, site *tenant.Site, clientID string, admit func(context.Context) error) (*Client, error)
}

// refuseFetch is an admit function that refuses every fetch: the client
// must be one already known (stored, or a document already cached).
func refuseFetch(context.Context) error { return storage.ErrNotFound }

// clientAdmitted is client, with admit asked before the extra source
// fetches anything (admittingSource); admit's error is returned as it is.
func (s *Server) clientAdmitted(ctx context.Context, site *tenant.Site, clientID string, admit func(context.Context) error) (*Client, error) {
	if clientID == "" || len(clientID) > 2048 {
		return nil, storage.ErrNotFound
	}
	c, err := s.clients.get(ctx, site, clientID)
	if errors.Is(err, storage.ErrNotFound) && s.extra != nil {
		if a, ok := s.extra.(admittingSource); ok && admit != nil {
			return a.ClientAdmitted(ctx, site, clientID, admit)
		}
		return s.extra.Client(ctx, site, clientID)
	}
	if err == nil && c.SiteID == nil && site.Variant != tenant.VariantVendor {
		// Vendor platforms are integrations of Variant A sites only.
		return nil, storage.ErrNotFound
	}
	return c, err
}

// siteOf returns the request's site; the tenant middleware guarantees one.
func siteOf(ctx context.Context) *tenant.Site {
	s, _ := tenant.FromContext(ctx)
	return s
}

// audit records a security event. A failure is logged, never shown: the
// action it describes already happened. Its IP is the client's address of
// r, or, without r (the token and revocation endpoints, which run under
// op), the one the server put in the request's context.
func (s *Server) audit(ctx context.Context, site tenant.ID, actor, action, target string, r *http.Request, details map[string]any) {
	e := &storage.AuditEvent{SiteID: site, Actor: actor, Action: action, Target: target, Details: details, CreatedAt: s.now()}
	if r != nil {
		e.IP = tenant.ClientIP(r)
	} else {
		e.IP = tenant.ClientIPFrom(ctx)
	}
	if err := s.store.RecordAudit(ctx, e); err != nil {
		s.logger.WarnContext(ctx, "audit event not recorded", "action", action, "err", err)
	}
}

// Revocation and Introspection serve POST /api/oauth/revoke and POST
// /api/oauth/introspect through op (form parsing, client authentication,
// RFC 6749 error bodies).
func (s *Server) Revocation(w http.ResponseWriter, r *http.Request) {
	w = clientChallenge(w, r)
	w.Header().Set("Cache-Control", "no-store")
	if !formBody(w, r, "revocation") {
		return
	}
	if r.PostForm.Get("client_id") == "" && noClient(w, r) {
		return
	}
	s.op.ServeHTTP(w, r)
}

// Introspection serves POST /api/oauth/introspect. Callers must be
// confidential clients; one without a secret gets 401 invalid_client (RFC
// 6749 §5.2), which op alone would answer 400.
func (s *Server) Introspection(w http.ResponseWriter, r *http.Request) {
	w = clientChallenge(w, r)
	w.Header().Set("Cache-Control", "no-store")
	if !formBody(w, r, "introspection") {
		return
	}
	if r.PostForm.Get("client_id") == "" || r.PostForm.Get("client_secret") == "" {
		writeOAuthError(w, errInvalidClient("introspection needs a confidential client authenticated with client_secret_post: client_id and client_secret in the form body"))
		return
	}
	s.op.ServeHTTP(w, r)
}
