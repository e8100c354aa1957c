package server

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

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

func requestDeadline(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		d := requestTimeout
		if r.Method == http.MethodPost && r.URL.Path == adminapi.BasePath+"/files" || isPictureUpload(r) {
			d = uploadTimeout
		}
		ctx, cancel := context.WithTimeout(r.Context(), d)
		defer cancel()
		c.SetRequest(r.WithContext(ctx))
		return next(c)
	}
}

// processPaths are answered for any Host: probes address the pod, not a
// site. (/metrics is on the metrics listener only: ops.go.)
var processPaths = map[string]bool{"/healthz": true, "/readyz": true}

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
	rateLimited := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "lectern_http_rate_limited_total", Help: "Requests refused with 429 Too Many Requests, by route.",
	}, []string{"route"})
	s.registry.MustRegister(requests, duration, rateLimited)
	// The routes that throttle start at 0, so the series exist (and the
	// spike alert has a baseline) before the first refusal.
	for _, route := range []string{vocab.TokenPath, vocab.RegistrationPath, vocab.AuthorizePath, "/login", vocab.MemberGraphQLPath, vocab.MCPPath} {
		rateLimited.WithLabelValues(route)
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
			method := methodLabel(c.Request().Method)
			duration.WithLabelValues(route, method).Observe(time.Since(start).Seconds())
			requests.WithLabelValues(route, method, statusClass(c.Response().Status)).Inc()
			if c.Response().Status == http.StatusTooManyRequests {
				rateLimited.WithLabelValues(route).Inc()
			}
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
