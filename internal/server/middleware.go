package server

import (
	"cmp"
	"context"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/lectern/lectern/adminapi"
	"github.com/lectern/lectern/tenant"
	"github.com/lectern/lectern/vocab"
	"github.com/lectern/lectern/web"
)

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

// isPictureUpload reports whether r uploads an account picture (web).
func isPictureUpload(r *http.Request) bool {
	return r.Method == http.MethodPost && r.URL.Path == web.PictureUploadPath
}

// deadlineFor is r's deadline: requestTimeout, or uploadTimeout for an
// upload.
func deadlineFor(r *http.Request) time.Duration {
	if r.Method == http.MethodPost && r.URL.Path == adminapi.BasePath+"/files" || isPictureUpload(r) {
		return uploadTimeout
	}
	return requestTimeout
}

// processPaths are answered for any Host: probes address the pod, not a
// site. (/metrics is on the metrics listener only: ops.go.)
var processPaths = map[string]bool{"/healthz": true, "/readyz": true}

// prepare runs first, before routing, for every request. It gives the
// request its deadline (see requestTimeout), its client's address
// (tenant.WithClientIP: the peer, or the address a trusted proxy
// forwarded), and its id, carried in the context for logs and echoed in
// X-Request-Id (a well-formed incoming id is kept from a trusted proxy
// only: anyone else could borrow another request's id and make the logs
// of two requests read as one), and resolves its site
// (tenant.Resolver.Admit; the process endpoints have none), answering
// itself when there is none to serve. Such answers (unknown host 404,
// malformed 400, failed look-up 503, the https redirect) are counted and
// access-logged here under the route "unresolved_host", as the router's
// middleware, which never runs for them, does for the rest. The request is
// cloned once, with all of it in its context.
func (s *Server) prepare(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		r := c.Request()
		fromProxy := tenant.TrustedPeer(r, s.siteOptions.TrustedProxies)
		id := ""
		if fromProxy {
			id = r.Header.Get(echo.HeaderXRequestID)
		}
		if !validRequestID(id) {
			id = newRequestID()
		}
		c.Response().Header().Set(echo.HeaderXRequestID, id)
		dl := newDeadlineCtx(r.Context(), deadlineFor(r))
		defer dl.release()
		ctx := tenant.WithClientIP(tenant.WithOutcome(tenant.WithRequestID(dl, id)), r, s.siteOptions.TrustedProxies)
		// otelhttp took the span's client.address from X-Forwarded-For,
		// whoever sent it.
		if span := trace.SpanFromContext(ctx); span.IsRecording() {
			span.SetAttributes(attribute.String("client.address", tenant.ClientIPFrom(ctx)))
		}
		if !processPaths[r.URL.Path] {
			admitted, ok := s.resolver.Admit(ctx, c.Response(), r, &s.siteOptions)
			if !ok {
				s.refused(ctx, c, start)
				return nil
			}
			ctx = admitted
		}
		c.SetRequest(r.WithContext(ctx))
		return next(c)
	}
}

// unresolvedRoute labels the requests the Host resolution answered itself.
// No host label: anyone can send any Host.
const unresolvedRoute = "unresolved_host"

// refused counts and access-logs a request that the Host resolution
// answered (prepare), under unresolvedRoute.
func (s *Server) refused(ctx context.Context, c echo.Context, start time.Time) {
	r, status := c.Request(), c.Response().Status
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.SetName(methodLabel(r.Method) + " " + unresolvedRoute)
		span.SetAttributes(attribute.String("http.route", unresolvedRoute))
	}
	if s.requests != nil {
		s.requests.observe(unresolvedRoute, r.Method, status, time.Since(start))
	}
	if s.app.Config.AccessLog {
		s.logRequest(ctx, r, status, time.Since(start))
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
		s.logRequest(r.Context(), r, c.Response().Status, time.Since(start))
		return nil
	}
}

// logRequest writes a request's access-log line. The path only: query
// strings can carry codes and state. The remote address is the one audit
// events and rate limits record (tenant.ClientIP), never a forwarded
// header from a peer that is not a trusted proxy.
func (s *Server) logRequest(ctx context.Context, r *http.Request, status int, d time.Duration) {
	s.app.Logger.LogAttrs(ctx, accessLevel(ctx, status), "request",
		slog.String("method", truncate(r.Method, maxMethodEcho)), slog.String("path", r.URL.Path),
		slog.Int("status", status), slog.Duration("duration", d),
		slog.String("remote", cmp.Or(tenant.ClientIPFrom(ctx), tenant.ClientIP(r))))
}

// maxMethodEcho bounds how much of a request's method is written back (the
// 405 answer) or logged: a client may send any token as a method, 60 kB
// of it too, and the standard ones are at most 7 bytes.
const maxMethodEcho = 32

// truncate cuts s to at most n bytes.
func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// accessLevel is the level of a request's access-log line: ERROR for a
// failure of ours (5xx), but a WARN for a 503 shed by design (the password
// gate's "busy, retry after 2 s": tenant.Shed), which a sign-in flood
// brings by the hundred and is no fault to alert on; INFO for the rest,
// refusals with 429 among them.
func accessLevel(ctx context.Context, status int) slog.Level {
	switch {
	case status == http.StatusServiceUnavailable && tenant.WasShed(ctx):
		return slog.LevelWarn
	case status >= 500:
		return slog.LevelError
	}
	return slog.LevelInfo
}

// requestMetrics are the request counters and latencies of every route.
type requestMetrics struct {
	requests    *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	rateLimited *prometheus.CounterVec
	// series are the series of each route and method, looked up once:
	// WithLabelValues hashes its labels on every call. Routes and method
	// labels are a closed set, so the cache is bounded.
	series sync.Map // routeKey → *routeSeries
}

func newRequestMetrics(reg prometheus.Registerer) *requestMetrics {
	m := &requestMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lectern_http_requests_total", Help: "HTTP requests by route, method and status code.",
		}, []string{"route", "method", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "lectern_http_request_duration_seconds", Help: "HTTP request latency by route.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"route", "method"}),
		rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lectern_http_rate_limited_total", Help: "Requests refused with 429 Too Many Requests, by route.",
		}, []string{"route"}),
	}
	reg.MustRegister(m.requests, m.duration, m.rateLimited)
	// The routes that throttle start at 0, so the series exist (and the
	// spike alert has a baseline) before the first refusal.
	for _, route := range []string{vocab.TokenPath, vocab.RegistrationPath, vocab.AuthorizePath, "/login", vocab.MemberGraphQLPath, vocab.MCPPath} {
		m.rateLimited.WithLabelValues(route)
	}
	return m
}

// observe counts one request of route and times it.
func (m *requestMetrics) observe(route, method string, status int, d time.Duration) {
	rs := m.seriesFor(route, methodLabel(method))
	rs.duration.Observe(d.Seconds())
	rs.count(statusIndex(status))
	if status == http.StatusTooManyRequests {
		m.rateLimited.WithLabelValues(route).Inc()
	}
}

func (m *requestMetrics) seriesFor(route, method string) *routeSeries {
	k := routeKey{route, method}
	if rs, ok := m.series.Load(k); ok {
		return rs.(*routeSeries)
	}
	rs := &routeSeries{key: k, duration: m.duration.WithLabelValues(route, method), vec: m.requests}
	got, _ := m.series.LoadOrStore(k, rs)
	return got.(*routeSeries)
}

// metrics counts and times the routed requests (s.requests); prepare
// counts those the Host resolution answers.
func (s *Server) metrics() echo.MiddlewareFunc {
	if s.requests == nil {
		s.requests = newRequestMetrics(s.registry)
	}
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
			s.requests.observe(route, c.Request().Method, c.Response().Status, time.Since(start))
			return nil
		}
	}
}

type routeKey struct{ route, method string }

// routeSeries are the metrics of one route and method. A status class's
// counter is made when the first request of that class is counted, so
// that, as with WithLabelValues, only the classes seen have series.
type routeSeries struct {
	key      routeKey
	duration prometheus.Observer
	vec      *prometheus.CounterVec
	requests [len(statusClasses)]atomic.Pointer[prometheus.Counter] // by statusIndex
}

func (rs *routeSeries) count(class int) {
	c := rs.requests[class].Load()
	if c == nil {
		// Racing requests get the same counter from the vector.
		counter := rs.vec.WithLabelValues(rs.key.route, rs.key.method, statusClasses[class])
		c = &counter
		rs.requests[class].Store(c)
	}
	(*c).Inc()
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

// statusClasses label the requests counter by status class.
var statusClasses = [...]string{"2xx", "3xx", "4xx", "5xx"}

// statusIndex is code's index in statusClasses (anything under 300 counts
// as 2xx).
func statusIndex(code int) int {
	switch {
	case code >= 500:
		return 3
	case code >= 400:
		return 2
	case code >= 300:
		return 1
	}
	return 0
}

func securityHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		return next(c)
	}
}
