package server

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/lectern/lectern/adminapi"
	"github.com/lectern/lectern/authserver"
	"github.com/lectern/lectern/authserver/bearer"
	"github.com/lectern/lectern/authserver/cimd"
	"github.com/lectern/lectern/discovery"
	"github.com/lectern/lectern/session"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
	"github.com/lectern/lectern/ui"
	"github.com/lectern/lectern/vocab"
)

// Server is the HTTP side of the app: every handler, mounted on one echo
// router, and the lifecycle of serving them (Serve).
type Server struct {
	app      *App
	echo     *echo.Echo
	resolver *tenant.Resolver
	registry *prometheus.Registry
	verifier *bearer.Verifier
	sessions *session.Store
	auth     *authserver.Server
	files    adminapi.FileStore
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
		resolver: tenant.NewResolver(a.Store, &tenant.ResolverOptions{TTL: a.Config.SiteCacheTTL}),
		registry: prometheus.NewRegistry(),
	}
	if s.files, err = openFiles(ctx, a.Config); err != nil {
		return nil, err
	}
	if err := s.buildHandlers(); err != nil {
		return nil, err
	}
	s.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	e := s.echo
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.errorHandler
	e.Logger.SetOutput(discardWriter{})

	// Pre runs before routing, for every request, matched or not.
	e.Pre(requestDeadline)
	e.Pre(s.requestID)
	e.Pre(echo.WrapMiddleware(siteMiddleware(s.resolver.Middleware(tenant.MiddlewareOptions{
		TrustedProxies: proxies, Logger: a.Logger,
	}))))
	e.Use(middleware.RecoverWithConfig(middleware.RecoverConfig{
		LogErrorFunc: func(c echo.Context, err error, stack []byte) error {
			a.Logger.ErrorContext(c.Request().Context(), "panic", "err", err, "stack", string(stack))
			return err
		},
	}))
	// Every request body is capped at 1 MiB but file uploads, which have
	// their own, larger cap.
	isUpload := func(c echo.Context) bool {
		return c.Request().Method == http.MethodPost && c.Request().URL.Path == adminapi.BasePath+"/files"
	}
	e.Use(s.metrics(),
		middleware.BodyLimitWithConfig(middleware.BodyLimitConfig{Limit: "1M", Skipper: isUpload}),
		middleware.BodyLimitWithConfig(middleware.BodyLimitConfig{
			Limit:   strconv.Itoa(adminapi.UploadBodyLimit) + "B",
			Skipper: func(c echo.Context) bool { return !isUpload(c) },
		}),
		securityHeaders)
	if a.Config.AccessLog {
		e.Use(s.accessLog)
	}

	// Documents answer HEAD as GET (RFC 9110 §9.3.2; net/http sends no
	// body for HEAD). Pages with effects (authorize, sign-in) do not.
	getHead := []string{http.MethodGet, http.MethodHead}
	e.Match(getHead, "/healthz", s.healthz)
	e.Match(getHead, "/readyz", s.readyz)
	e.Match(getHead, "/metrics", echo.WrapHandler(promhttp.HandlerFor(s.registry, promhttp.HandlerOpts{Registry: s.registry})))

	disc := discovery.NewHandler(a.Keys, a.Logger)
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
	e.GET(vocab.AuthorizePath, h(auth.Authorize))
	e.Match([]string{http.MethodGet, http.MethodPost}, "/login", h(auth.Login))
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
	return s, nil
}

// buildHandlers makes what several routes share: the access-token
// verifier, the browser sessions, and the authorization server.
func (s *Server) buildHandlers() error {
	a := s.app
	s.verifier = bearer.New(bearer.Options{Keys: a.Keys, Store: a.Store, Cache: a.Cache, Logger: a.Logger})
	s.sessions = session.NewStore(a.Cache, time.Now)
	renderer, err := ui.NewRenderer(a.Logger)
	if err != nil {
		return err
	}
	fetcher := cimd.New(cimd.Options{
		Cache: a.Cache, Logger: a.Logger, RootCAs: a.Config.CIMDTestRoots, AllowLoopbackForTests: a.Config.CIMDTestRoots != nil,
	})
	s.auth, err = authserver.New(authserver.Options{
		Sessions: s.sessions, Store: a.Store, Cache: a.Cache, Keys: a.Keys, Verifier: s.verifier, UI: renderer, Logger: a.Logger, Platform: a.Platform,
		Clients: &authserver.CIMDClients{Fetcher: fetcher, Store: a.Store, Now: time.Now},
	})
	return err
}

// ServeHTTP answers r through the router, as Serve does.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.echo.ServeHTTP(w, r) }

// Router is the echo router, for a caller that adds routes of its own
// before Serve (tests add a slow one).
func (s *Server) Router() *echo.Echo { return s.echo }

// Auth is the authorization server, for tests that change its code
// lifetime or drop its cached CIMD clients.
func (s *Server) Auth() *authserver.Server { return s.auth }

// Every request gets a deadline, so that a database or cache that accepts
// connections and then stalls yields a 503 (the error handler's answer to
// an expired context) instead of a request that hangs until the server's
// write timeout drops the connection without an answer. Uploads, which may
// stream 10 MiB to an object store, get longer; both stay under the
// server's WriteTimeout (60 s).
const (
	requestTimeout = 20 * time.Second
	uploadTimeout  = 50 * time.Second
)

func requestDeadline(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		d := requestTimeout
		if r.Method == http.MethodPost && r.URL.Path == adminapi.BasePath+"/files" {
			d = uploadTimeout
		}
		ctx, cancel := context.WithTimeout(r.Context(), d)
		defer cancel()
		c.SetRequest(r.WithContext(ctx))
		return next(c)
	}
}

// processPaths are answered for any Host: probes and scrapes address the
// pod, not a site.
var processPaths = map[string]bool{"/healthz": true, "/readyz": true, "/metrics": true}

// siteMiddleware applies the tenant middleware to every path but the
// process endpoints.
func siteMiddleware(mw func(http.Handler) http.Handler) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		withSite := mw(next)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if processPaths[r.URL.Path] {
				next.ServeHTTP(w, r)
				return
			}
			withSite.ServeHTTP(w, r)
		})
	}
}

func (s *Server) healthz(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}

// readyz fails while the database or the cache cannot be reached, so the
// load balancer stops sending traffic until they are back.
func (s *Server) readyz(c echo.Context) error {
	checks := map[string]string{}
	status, code := "ok", http.StatusOK
	for name, err := range s.app.ready(c.Request().Context()) {
		if err != nil {
			checks[name] = "unavailable"
			status, code = "unavailable", http.StatusServiceUnavailable
			s.app.Logger.WarnContext(c.Request().Context(), "not ready", "dependency", name, "err", err)
			continue
		}
		checks[name] = "ok"
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(code, map[string]any{"status": status, "checks": checks})
}

// errorHandler answers every error echo sees as RFC 6749-style JSON. It
// never shows internals: unexpected errors are logged and answered
// server_error (or temporarily_unavailable when storage is down).
func (s *Server) errorHandler(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	code, desc := http.StatusInternalServerError, "internal error"
	errCode := "server_error"
	var he *echo.HTTPError
	switch {
	case errors.As(err, &he):
		code = he.Code
		desc = http.StatusText(code)
		if m, ok := he.Message.(string); ok && code < 500 {
			desc = m
		}
		errCode = tenant.ErrorCode(code)
	case errors.Is(err, storage.ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
		code, errCode, desc = http.StatusServiceUnavailable, "temporarily_unavailable", "a backing service is unavailable; try again shortly"
		c.Response().Header().Set("Retry-After", "5")
	}
	if code >= 500 {
		s.app.Logger.ErrorContext(c.Request().Context(), "request failed", "status", code, "err", err)
	}
	switch code {
	case http.StatusMethodNotAllowed:
		desc = "method " + c.Request().Method + " is not allowed here"
	case http.StatusRequestEntityTooLarge:
		desc = "the request body is larger than this endpoint accepts (1 MiB; file uploads " +
			strconv.Itoa(adminapi.DefaultMaxUploadBytes>>20) + " MiB)"
	}
	tenant.WriteError(c.Response(), code, errCode, strings.ToLower(desc[:1])+desc[1:])
}

// requestID gives every request an id, carried in the context for logs and
// echoed in X-Request-Id. A well-formed incoming id (from our proxy) is kept.
func (s *Server) requestID(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		id := c.Request().Header.Get(echo.HeaderXRequestID)
		if !validRequestID(id) {
			id = newRequestID()
		}
		c.Response().Header().Set(echo.HeaderXRequestID, id)
		c.SetRequest(c.Request().WithContext(tenant.WithRequestID(c.Request().Context(), id)))
		return next(c)
	}
}

func validRequestID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

func (s *Server) accessLog(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		if err != nil {
			c.Error(err)
		}
		r := c.Request()
		level := slog.LevelInfo
		if c.Response().Status >= 500 {
			level = slog.LevelError
		}
		// The path only: query strings can carry codes and state.
		s.app.Logger.LogAttrs(r.Context(), level, "request",
			slog.String("method", r.Method), slog.String("path", r.URL.Path),
			slog.Int("status", c.Response().Status), slog.Duration("duration", time.Since(start)),
			slog.String("remote", c.RealIP()))
		return nil
	}
}

func (s *Server) metrics() echo.MiddlewareFunc {
	requests := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "lectern_http_requests_total", Help: "HTTP requests by route, method and status code.",
	}, []string{"route", "method", "code"})
	duration := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "lectern_http_request_duration_seconds", Help: "HTTP request latency by route.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
	}, []string{"route", "method"})
	s.registry.MustRegister(requests, duration)
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			start := time.Now()
			err := next(c)
			if err != nil {
				c.Error(err)
			}
			// Routes, not sites, label the series: thousands of sites would
			// explode the cardinality.
			route := c.Path()
			if route == "" {
				route = "unmatched"
			}
			method := methodLabel(c.Request().Method)
			duration.WithLabelValues(route, method).Observe(time.Since(start).Seconds())
			requests.WithLabelValues(route, method, statusClass(c.Response().Status)).Inc()
			return nil
		}
	}
}

// methodLabel is the method as a metric label: the standard methods by
// name, anything else (a client may send any token as a method) "OTHER",
// so that requests cannot mint series.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "OTHER"
}

func statusClass(code int) string {
	switch {
	case code >= 500:
		return "5xx"
	case code >= 400:
		return "4xx"
	case code >= 300:
		return "3xx"
	}
	return "2xx"
}

func securityHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		return next(c)
	}
}

type discardWriter struct{}

func (discardWriter) Write(p []byte) (int, error) { return len(p), nil }
