package server

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/lectern/lectern/adminapi"
	"github.com/lectern/lectern/authserver"
	"github.com/lectern/lectern/authserver/bearer"
	"github.com/lectern/lectern/authserver/cimd"
	"github.com/lectern/lectern/authserver/password"
	"github.com/lectern/lectern/discovery"
	"github.com/lectern/lectern/internal/brand"
	"github.com/lectern/lectern/mail"
	"github.com/lectern/lectern/session"
	"github.com/lectern/lectern/tenant"
	"github.com/lectern/lectern/ui"
	"github.com/lectern/lectern/vocab"
)

// Server is the HTTP side of the app: every handler, mounted on one echo
// router, and the lifecycle of serving them (Serve).
type Server struct {
	app  *App
	echo *echo.Echo
	// handler is echo under the OpenTelemetry HTTP instrumentation.
	handler  http.Handler
	resolver *tenant.Resolver
	// siteOptions configure the site resolution of every request (prepare).
	siteOptions tenant.MiddlewareOptions
	registry    *prometheus.Registry
	verifier    *bearer.Verifier
	sessions    *session.Store
	auth        *authserver.Server
	files       adminapi.FileStore
	mailer      *mail.Sender
	mailDesc    string
	// brand dresses every page in its site's appearance.
	brand *brand.Source
	// requests count and time every request (metrics, prepare).
	requests *requestMetrics

	readiness *readiness
	// draining is set when shutdown begins: /readyz answers 503 while
	// everything else is still served (Config.ShutdownDelay).
	draining atomic.Bool
}

// New builds the handlers over a and the router: process endpoints first,
// then every site route behind the Host → Site middleware. It opens the
// upload store (--files-url), so a setting that cannot work stops the
// process here rather than at the first upload.
func New(ctx context.Context, a *App) (*Server, error) {
	proxies, err := tenant.ParseTrustedProxies(a.Config.TrustedProxies)
	if err != nil {
		return nil, errors.New("--trusted-proxies: " + err.Error())
	}
	s := &Server{
		app:      a,
		echo:     echo.New(),
		resolver: tenant.NewResolver(a.Store, &tenant.ResolverOptions{TTL: a.Config.SiteCacheTTL, MaxEntries: a.Config.SiteCacheEntries}),
		registry: prometheus.NewRegistry(),

		readiness: newReadiness(),
	}
	if s.files, err = openFiles(ctx, a.Config); err != nil {
		return nil, err
	}
	if err := s.buildHandlers(); err != nil {
		return nil, err
	}
	if err := s.buildMail(); err != nil {
		return nil, err
	}
	s.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		dependencyCollector{s})
	registerCacheMetrics(s.registry, a.Cache)
	registerLatencyMetrics(s.registry, a.Cache, a.Store)
	e := s.echo
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.errorHandler
	e.Logger.SetOutput(discardWriter{})

	// Pre runs before routing, for every request, matched or not.
	s.siteOptions = tenant.MiddlewareOptions{TrustedProxies: proxies, Logger: a.Logger}
	e.Pre(s.prepare)
	e.Use(middleware.RecoverWithConfig(middleware.RecoverConfig{
		LogErrorFunc: func(c echo.Context, err error, stack []byte) error {
			a.Logger.ErrorContext(c.Request().Context(), "panic", "err", err, "stack", string(stack))
			return err
		},
	}))
	// Every request body is capped at 1 MiB but file uploads, which have
	// their own, larger cap; account pictures are capped by their page
	// (web.PictureBodyLimit).
	isUpload := func(c echo.Context) bool {
		return c.Request().Method == http.MethodPost && c.Request().URL.Path == adminapi.BasePath+"/files"
	}
	isPicture := func(c echo.Context) bool { return isPictureUpload(c.Request()) }
	e.Use(s.metrics(), traceRoute,
		bodyLimit(MaxBodyBytes, func(c echo.Context) bool { return isUpload(c) || isPicture(c) }),
		bodyLimit(adminapi.UploadBodyLimit, func(c echo.Context) bool { return !isUpload(c) }),
		securityHeaders)
	if a.Config.AccessLog {
		e.Use(s.accessLog)
	}

	// Documents answer HEAD as GET (RFC 9110 §9.3.2; net/http sends no
	// body for HEAD). Pages with effects (authorize, sign-in) do not.
	getHead := []string{http.MethodGet, http.MethodHead}
	e.Match(getHead, "/healthz", s.healthz)
	e.Match(getHead, "/readyz", s.readyz)

	disc := discovery.NewHandler(a.Keys, a.Logger)
	s.registry.MustRegister(s.cacheCollector(disc))
	e.Match(getHead, vocab.ProtectedResourcePath, echo.WrapHandler(http.HandlerFunc(disc.ProtectedResource)))
	e.Match(getHead, vocab.AuthorizationServerPath, echo.WrapHandler(http.HandlerFunc(disc.AuthorizationServer)))
	e.Match(getHead, vocab.OpenIDConfigurationPath, echo.WrapHandler(http.HandlerFunc(disc.AuthorizationServer)))
	e.Match(getHead, vocab.JWKSPath, echo.WrapHandler(http.HandlerFunc(disc.JWKS)))
	e.Match(getHead, "/.well-known/*", echo.WrapHandler(http.HandlerFunc(discovery.NotFound)))
	// Browser clients (the MCP Inspector, web agents) read the metadata
	// cross-origin with headers of their own (MCP-Protocol-Version), so
	// they preflight: every origin, any header, no credentials.
	e.OPTIONS("/.well-known/*", echo.WrapHandler(http.HandlerFunc(discovery.Preflight)))

	auth := s.auth
	h := func(f http.HandlerFunc) echo.HandlerFunc { return echo.WrapHandler(f) }
	// GET and POST (OpenID Connect Core §3.1.2.1); other methods reach
	// the handler too, which answers them with its HTML page, not JSON.
	e.Any(vocab.AuthorizePath, h(auth.Authorize))
	e.Match([]string{http.MethodGet, http.MethodPost}, "/login", h(auth.Login))
	e.Match([]string{http.MethodGet, http.MethodPost}, "/login/factor", h(auth.Factor))
	e.Match([]string{http.MethodGet, http.MethodPost}, "/login/passkey/begin", h(auth.PasskeyBegin))
	e.Match([]string{http.MethodGet, http.MethodPost}, "/login/passkey/finish", h(auth.PasskeyFinish))
	e.GET("/login/continue", h(auth.Continue))
	e.Match([]string{http.MethodGet, http.MethodPost}, "/consent", h(auth.Consent))
	e.Match([]string{http.MethodGet, http.MethodPost}, "/logout", h(auth.Logout))
	e.POST(vocab.TokenPath, h(auth.Token))
	e.Match([]string{http.MethodGet, http.MethodPost}, vocab.UserInfoPath, h(auth.UserInfo))
	e.POST(vocab.RevocationPath, h(auth.Revocation))
	e.POST(vocab.IntrospectionPath, h(auth.Introspection))
	e.POST(vocab.RegistrationPath, h(auth.Register))
	e.Match(getHead, "/static/*", echo.WrapHandler(ui.Static()))

	s.mountMemberAPI()
	s.mountMCP()
	s.mountAgentDocs()
	s.mountAdminAPI()
	s.mountWeb()
	s.mountAccounts()
	s.handler = tracedHandler(e, a.Config.TracerProvider, proxies)
	return s, nil
}

// MaxBodyBytes caps every request body but uploads': vocab's 1 MiB, which
// /auth.md states and mcp reads at most.
const MaxBodyBytes = vocab.MaxBodyBytes

// bodyLimit caps request bodies at n bytes, unless skip: a declared
// length beyond it is refused at once (413), and a chunked body is read
// through http.MaxBytesReader, whose *http.MaxBytesError the handlers
// recognise (errors.As) to answer 413 in their own format: a form
// endpoint's JSON, a page's HTML. echo's BodyLimit fails the read with an
// echo.HTTPError, which the handlers outside echo cannot tell from a
// malformed body (they answered 400), and spells sizes in decimal ("1M"
// is 1,000,000 bytes).
func bodyLimit(n int, skip func(echo.Context) bool) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if skip(c) {
				return next(c)
			}
			r := c.Request()
			if r.Body == nil || r.Body == http.NoBody { // a GET: nothing to bound
				return next(c)
			}
			if r.ContentLength > int64(n) {
				return echo.ErrStatusRequestEntityTooLarge
			}
			r.Body = http.MaxBytesReader(c.Response().Writer, r.Body, int64(n))
			return next(c)
		}
	}
}

// buildHandlers makes what several routes share: the access-token
// verifier, the browser sessions, and the authorization server.
func (s *Server) buildHandlers() error {
	a := s.app
	s.verifier = bearer.New(bearer.Options{Keys: a.Keys, Store: a.Store, Cache: a.Cache, Logger: a.Logger})
	s.sessions = session.NewStore(a.Cache, time.Now)
	s.sessions.SetMax(a.Config.SessionsPerAccount)
	s.brand = brand.New(a.Store, a.Logger)
	renderer, err := ui.NewRenderer(a.Logger)
	if err != nil {
		return err
	}
	renderer.WithBrand(s.brand)
	fetcher := cimd.New(cimd.Options{
		Cache: a.Cache, Logger: a.Logger, RootCAs: a.Config.CIMDTestRoots, AllowLoopbackForTests: a.Config.CIMDTestRoots != nil,
	})
	s.auth, err = authserver.New(authserver.Options{
		Sessions: s.sessions, Store: a.Store, Cache: a.Cache, Keys: a.Keys, Verifier: s.verifier, UI: renderer, Logger: a.Logger, Platform: a.Platform,
		Clients: &authserver.CIMDClients{Fetcher: fetcher, Store: a.Store, Now: time.Now},
		Limits:  &a.Config.Limits,
		Passwords: password.NewGate(password.GateOptions{
			Capacity: a.Config.PasswordChecks, QueuePerKey: a.Config.PasswordQueue, Queue: max(64, 8*a.Config.PasswordQueue),
		}),
	})
	return err
}

// ServeHTTP answers r through the router, as Serve does.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// Router is the echo router, for a caller that adds routes of its own
// before Serve (tests add a slow one).
func (s *Server) Router() *echo.Echo { return s.echo }

// Auth is the authorization server, for tests that change its code
// lifetime or drop its cached CIMD clients.
func (s *Server) Auth() *authserver.Server { return s.auth }

type discardWriter struct{}

func (discardWriter) Write(p []byte) (int, error) { return len(p), nil }
