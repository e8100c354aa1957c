package server

import (
	"context"
	"crypto/tls"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/lectern/lectern/adminapi"
	"github.com/lectern/lectern/tenant"
)

// Every request carries a deadline (uploads a longer one), so a stalled
// database or cache yields a 503 before the server's write timeout would
// drop the connection unanswered; and an id and its site, resolved before
// routing. An unknown host is answered without reaching a handler; the
// process endpoints are served for any host.
func TestPrepare(t *testing.T) {
	s, hosts := benchServer(t, 1)
	for _, c := range []struct {
		method, host, path, id string
		status                 int
		deadline               time.Duration
		site                   bool
	}{
		{http.MethodGet, hosts[0], "/x", "", http.StatusNoContent, requestTimeout, true},
		{http.MethodGet, hosts[0], "/x", "proxy-7.req_42", http.StatusNoContent, requestTimeout, true},
		{http.MethodGet, hosts[0], "/x", "not a valid id!", http.StatusNoContent, requestTimeout, true},
		{http.MethodPost, hosts[0], adminapi.BasePath + "/files", "", http.StatusNoContent, uploadTimeout, true},
		{http.MethodGet, "unknown.example", "/x", "", http.StatusNotFound, 0, false},
		{http.MethodGet, "bad host", "/x", "", http.StatusBadRequest, 0, false},
		{http.MethodGet, "unknown.example", "/healthz", "", http.StatusNoContent, requestTimeout, false},
	} {
		var reached context.Context
		h := s.prepare(func(e echo.Context) error {
			ctx := e.Request().Context()
			reached = ctx
			dl, ok := ctx.Deadline()
			if left := time.Until(dl); !ok || left > c.deadline || left < c.deadline-time.Second {
				t.Errorf("%s %s%s: deadline in %v (%v); want about %v", c.method, c.host, c.path, left, ok, c.deadline)
			}
			if id := tenant.RequestID(ctx); id == "" || id != e.Response().Header().Get(echo.HeaderXRequestID) {
				t.Errorf("%s %s%s: request id %q in the context, %q in X-Request-Id", c.method, c.host, c.path, id, e.Response().Header().Get(echo.HeaderXRequestID))
			}
			if site, ok := tenant.FromContext(ctx); ok != c.site || ok && site.Host() != c.host {
				t.Errorf("%s %s%s: site %v (%v) in the context", c.method, c.host, c.path, site, ok)
			}
			ctx.Done() // as a query would: arms the deadline
			return e.NoContent(http.StatusNoContent)
		})
		req := httptest.NewRequest(c.method, c.path, nil)
		req.Host = c.host
		req.TLS = &tls.ConnectionState{} // the sites are https
		if c.id != "" {
			req.Header.Set(echo.HeaderXRequestID, c.id)
		}
		rec := httptest.NewRecorder()
		if err := h(s.echo.NewContext(req, rec)); err != nil {
			t.Fatal(err)
		}
		if rec.Code != c.status || (reached != nil) != (c.status == http.StatusNoContent) {
			t.Errorf("%s %s%s: %d, handler reached %v; want %d", c.method, c.host, c.path, rec.Code, reached != nil, c.status)
		}
		// Every answer has an id, the tenant step's errors too; an
		// incoming one is not kept from a peer that is no trusted proxy
		// (TestRequestIDFromTrustedProxiesOnly).
		if id := rec.Header().Get(echo.HeaderXRequestID); !validRequestID(id) || c.id != "" && id == c.id {
			t.Errorf("%s %s%s with id %q: X-Request-Id %q", c.method, c.host, c.path, c.id, id)
		}
		// The deadline's timer is released with the request.
		if reached != nil && !errors.Is(reached.Err(), context.Canceled) {
			t.Errorf("%s %s%s: the request's context after it: %v", c.method, c.host, c.path, reached.Err())
		}
	}
	if requestTimeout >= 60*time.Second || uploadTimeout >= 60*time.Second {
		t.Error("a request deadline is not under the server's 60 s WriteTimeout")
	}
}

// prepare runs first, for every request, routed or not: the tenant step's
// answer to an unknown host carries its request id.
func TestPrepareRunsFirst(t *testing.T) {
	s, _ := benchServer(t, 1)
	req := httptest.NewRequest(http.MethodGet, "/no-such-route", nil)
	req.Host = "unknown.example"
	rec := httptest.NewRecorder()
	s.echo.ServeHTTP(rec, req)
	if rec.Code != http.StatusNotFound || !validRequestID(rec.Header().Get(echo.HeaderXRequestID)) || !strings.Contains(rec.Body.String(), `"not_found"`) {
		t.Fatalf("unknown host: %d, X-Request-Id %q, %s", rec.Code, rec.Header().Get(echo.HeaderXRequestID), rec.Body)
	}
}

// A request's deadline behaves as context.WithDeadline's whether or not
// anything asked for Done before it passed.
func TestDeadlineCtx(t *testing.T) {
	const d = 30 * time.Millisecond
	expired := func(t *testing.T, ctx context.Context, want error) {
		t.Helper()
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("Done not closed")
		}
		if err := ctx.Err(); !errors.Is(err, want) {
			t.Fatalf("Err %v, want %v", err, want)
		}
	}
	t.Run("never armed", func(t *testing.T) {
		c := newDeadlineCtx(context.Background(), d)
		defer c.release()
		if c.Err() != nil {
			t.Fatal("Err before the deadline")
		}
		time.Sleep(d + 10*time.Millisecond)
		if !errors.Is(c.Err(), context.DeadlineExceeded) || !errors.Is(context.Cause(c), context.DeadlineExceeded) {
			t.Fatalf("Err %v, Cause %v after the deadline", c.Err(), context.Cause(c))
		}
		expired(t, c, context.DeadlineExceeded)
	})
	t.Run("armed", func(t *testing.T) {
		c := newDeadlineCtx(context.Background(), d)
		defer c.release()
		child, cancel := context.WithTimeout(c, time.Hour)
		defer cancel()
		expired(t, c, context.DeadlineExceeded)
		expired(t, child, context.DeadlineExceeded)
	})
	t.Run("parent canceled", func(t *testing.T) {
		for _, arm := range []bool{false, true} {
			parent, cancel := context.WithCancel(context.Background())
			c := newDeadlineCtx(parent, time.Hour)
			if arm {
				c.Done()
			}
			cancel()
			expired(t, c, context.Canceled)
			c.release()
		}
	})
	t.Run("released", func(t *testing.T) {
		for _, arm := range []bool{false, true} {
			c := newDeadlineCtx(context.Background(), time.Hour)
			var child context.Context = context.Background()
			if arm {
				var cancel context.CancelFunc
				child, cancel = context.WithCancel(c)
				defer cancel()
			}
			c.release()
			expired(t, c, context.Canceled)
			// A derived context registered with the armed deadline
			// itself, so it is canceled with it, not later by a watcher
			// goroutine.
			if arm && !errors.Is(child.Err(), context.Canceled) {
				t.Fatalf("child of a released deadline: %v", child.Err())
			}
		}
	})
	t.Run("earlier parent deadline", func(t *testing.T) {
		parent, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		c := newDeadlineCtx(parent, time.Hour)
		defer c.release()
		if dl, _ := c.Deadline(); time.Until(dl) > d {
			t.Fatalf("deadline in %v, want the parent's (%v)", time.Until(dl), d)
		}
		expired(t, c, context.DeadlineExceeded)
	})
	t.Run("values", func(t *testing.T) {
		type key struct{}
		c := newDeadlineCtx(context.WithValue(context.Background(), key{}, "v"), time.Hour)
		defer c.release()
		if c.Value(key{}) != "v" {
			t.Fatal("value lost before arming")
		}
		c.Done()
		if c.Value(key{}) != "v" {
			t.Fatal("value lost after arming")
		}
	})
}
