package server

import (
	"context"
	"log/slog"
	"net/http"
	"testing"

	"github.com/lectern/lectern/tenant"
)

// The access log keeps ERROR for failures of ours: the password gate's
// 503, shed by design under load (tenant.Shed), is a WARN, and 429s are
// INFO; any other 5xx, a 503 from an outage among them, stays ERROR.
func TestAccessLevel(t *testing.T) {
	shed := tenant.WithOutcome(context.Background())
	tenant.Shed(shed)
	plain := tenant.WithOutcome(context.Background())
	for _, c := range []struct {
		name   string
		ctx    context.Context
		status int
		want   slog.Level
	}{
		{"ok", plain, http.StatusOK, slog.LevelInfo},
		{"rate limited", plain, http.StatusTooManyRequests, slog.LevelInfo},
		{"gate busy", shed, http.StatusServiceUnavailable, slog.LevelWarn},
		{"outage", plain, http.StatusServiceUnavailable, slog.LevelError},
		{"no outcome in the context", context.Background(), http.StatusServiceUnavailable, slog.LevelError},
		{"failure after a shed note", shed, http.StatusInternalServerError, slog.LevelError},
	} {
		if got := accessLevel(c.ctx, c.status); got != c.want {
			t.Errorf("%s: %d logged at %v, want %v", c.name, c.status, got, c.want)
		}
	}
}
