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
)

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
