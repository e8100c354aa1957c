package server

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/lectern/lectern/adminapi"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
	"github.com/lectern/lectern/vocab"
)

func (s *Server) healthz(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}

// readyz answers 200 only while this replica can serve a sign-in: the
// database takes writes and the cache takes writes (see readiness). While
// shutting down it answers 503 "draining" so that load balancers stop
// sending requests before the listener closes.
func (s *Server) readyz(c echo.Context) error {
	r := s.readiness.check(c.Request().Context(), s)
	code := http.StatusOK
	if r.Status != "ok" {
		code = http.StatusServiceUnavailable
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(code, r)
}

// errorHandler answers every error echo sees as RFC 6749-style JSON, or
// under the admin API's path as an RFC 9457 problem document. It
// never shows internals: unexpected errors are logged and answered
// server_error (or temporarily_unavailable when storage is down).
func (s *Server) errorHandler(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	code, desc := http.StatusInternalServerError, "internal error"
	errCode := "server_error"
	var he *echo.HTTPError
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		// A handler that returns its body's read error (bodyLimit).
		code, errCode = http.StatusRequestEntityTooLarge, tenant.ErrorCode(http.StatusRequestEntityTooLarge)
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
		// A method is any token a client sends, of any length.
		desc = "method " + truncate(c.Request().Method, maxMethodEcho) + " is not allowed here"
	case http.StatusRequestEntityTooLarge:
		desc = "the request body is larger than this endpoint accepts (" + strconv.Itoa(MaxBodyBytes>>20) + " MiB; file uploads " +
			strconv.Itoa(adminapi.DefaultMaxUploadBytes>>20) + " MiB)"
	}
	desc = vocab.ErrorDescription(code, desc)
	if p := c.Request().URL.Path; p == adminapi.BasePath || strings.HasPrefix(p, adminapi.BasePath+"/") {
		// The admin API's errors are RFC 9457 problem documents, those
		// met before its handlers run too.
		adminapi.WriteProblem(c.Response(), code, desc)
		return
	}
	tenant.WriteError(c.Response(), code, errCode, desc)
}
