package server

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/vocab"
)

// TestCacheMetrics checks that an operator can read each in-process
// cache's hit rate from /metrics: a first request misses, the second hits.
func TestCacheMetrics(t *testing.T) {
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.DiscardHandler))
	a, err := Open(context.Background(), &Config{DataDir: t.TempDir()}, slog.New(slog.DiscardHandler), OpenOptions{Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	site := &storage.Site{Slug: "metrics", Name: "Metrics", Origin: "http://metrics.test", RegistrationVariant: "A", IDTokensEnabled: true}
	if err := a.Platform.CreateSite(t.Context(), site); err != nil {
		t.Fatal(err)
	}
	s, err := New(t.Context(), a)
	if err != nil {
		t.Fatal(err)
	}
	get := func(host, path string) string {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Host = host
		h := http.Handler(s)
		if path == "/metrics" {
			h = s.OpsHandler() // the metrics listener, never a site's origin
		}
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("%s%s: %d %s", host, path, rec.Code, rec.Body)
		}
		return rec.Body.String()
	}
	for range 2 {
		get("metrics.test", vocab.OpenIDConfigurationPath)
		get("metrics.test", vocab.JWKSPath)
	}
	metrics := get("pod.internal", "/metrics")
	for _, want := range []string{
		`lectern_cache_requests_total{cache="sites",result="miss"} 1`,
		`lectern_cache_requests_total{cache="sites",result="hit"} 3`,
		`lectern_cache_requests_total{cache="key_rings",result="miss"} 1`,
		`lectern_cache_requests_total{cache="key_rings",result="hit"} 1`,
		`lectern_cache_requests_total{cache="metadata_documents",result="hit"} 1`,
		`lectern_cache_entries{cache="sites"} 1`,
		`lectern_cache_entries{cache="verified_tokens"} 0`,
		`lectern_cache_entries{cache="clients"} 0`,
		`lectern_dependency_up{dependency="database"} 1`,
		`lectern_dependency_up{dependency="cache"} 1`,
		"lectern_ready 1",
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
