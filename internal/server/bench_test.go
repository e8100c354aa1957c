package server

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/vocab"
)

// benchServer builds a server over an embedded store holding n sites (each
// with its key ring), and returns it with the sites' hosts.
func benchServer(b testing.TB, n int) (*Server, []string) {
	b.Helper()
	// zitadel/oidc logs its routes through slog's default logger.
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.DiscardHandler))
	cfg := &Config{DataDir: b.TempDir(), SiteCacheTTL: time.Hour}
	a, err := Open(context.Background(), cfg, slog.New(slog.DiscardHandler), OpenOptions{Migrate: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(a.Close)
	hosts := make([]string, n)
	start := time.Now()
	for i := range n {
		s := &storage.Site{Slug: fmt.Sprintf("site-%d", i), Name: fmt.Sprintf("Site %d", i),
			Origin: fmt.Sprintf("https://site-%d.bench.test", i), RegistrationVariant: "A", IDTokensEnabled: true}
		if err := a.Platform.CreateSite(context.Background(), s); err != nil {
			b.Fatal(err)
		}
		hosts[i] = s.Tenant().Host()
	}
	b.Logf("created %d sites with key rings in %s", n, time.Since(start).Round(time.Millisecond))
	s, err := New(context.Background(), a)
	if err != nil {
		b.Fatal(err)
	}
	return s, hosts
}

// serveAll requests path once per host so that every site is resolved and
// its key ring loaded: the benchmark measures the steady state.
func serveAll(b *testing.B, s *Server, hosts []string, path string) {
	for _, h := range hosts {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Host = h
		req.TLS = &tls.ConnectionState{} // the sites are https
		s.echo.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("%s%s: %d %s", h, path, rec.Code, rec.Body)
		}
	}
}

// The requests cycle through every site, so with 10,000 sites each request
// hits a different cache entry: the realistic worst case.
func benchmarkPath(b *testing.B, path string) {
	for _, n := range []int{10, 10000} {
		b.Run(fmt.Sprintf("sites=%d", n), func(b *testing.B) {
			s, hosts := benchServer(b, n)
			serveAll(b, s, hosts, path)
			reqs := make([]*http.Request, len(hosts))
			for i, h := range hosts {
				reqs[i] = httptest.NewRequest(http.MethodGet, path, nil)
				reqs[i].Host = h
				reqs[i].TLS = &tls.ConnectionState{}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				rec := httptest.NewRecorder()
				s.echo.ServeHTTP(rec, reqs[i%len(reqs)])
				if rec.Code != http.StatusOK {
					b.Fatalf("status %d", rec.Code)
				}
			}
		})
	}
}

// BenchmarkSiteResolution serves the protected-resource metadata: Host →
// Site resolution plus a pre-serialized per-site document.
func BenchmarkSiteResolution(b *testing.B) { benchmarkPath(b, vocab.ProtectedResourcePath) }

// BenchmarkJWKS serves each site's JWKS.
func BenchmarkJWKS(b *testing.B) { benchmarkPath(b, vocab.JWKSPath) }

// BenchmarkSignInPage serves the sign-in page to a browser asking for
// German, and for comparison English (Accept-Language), through the whole
// stack: site resolution, the language choice, the site's brand (kept in
// memory), the CSRF cookie and the template set of the language.
func BenchmarkSignInPage(b *testing.B) {
	s, hosts := benchServer(b, 10)
	for _, lang := range []string{"de", "en"} {
		b.Run("lang="+lang, func(b *testing.B) {
			reqs := make([]*http.Request, len(hosts))
			for i, h := range hosts {
				reqs[i] = httptest.NewRequest(http.MethodGet, "/login", nil)
				reqs[i].Host = h
				reqs[i].TLS = &tls.ConnectionState{} // the sites are https
				reqs[i].Header.Set("Accept-Language", lang+";q=0.9,fr;q=0.1")
			}
			for _, r := range reqs {
				rec := httptest.NewRecorder()
				s.echo.ServeHTTP(rec, r)
				if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `<html lang="`+lang+`">`) {
					b.Fatalf("%s/login: %d, not in %s:\n%.300s", r.Host, rec.Code, lang, rec.Body)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				rec := httptest.NewRecorder()
				s.echo.ServeHTTP(rec, reqs[i%len(reqs)])
				if rec.Code != http.StatusOK {
					b.Fatalf("status %d", rec.Code)
				}
			}
		})
	}
}
