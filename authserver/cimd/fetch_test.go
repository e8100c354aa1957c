package cimd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/storage/cache"
)

// realisticDoc is a document like the ones real clients publish: well over
// 5 KB, with many optional and unknown fields.
func realisticDoc(clientID, host string) map[string]any {
	langs := map[string]string{}
	for _, l := range []string{"de", "fr", "es", "it", "nl", "pt", "pl", "sv", "ja", "zh"} {
		langs[l] = "Acme Agent connects your Lectern school to your assistant, so you can ask about courses, " +
			"enrolments and lectures in plain language (" + l + "). " + strings.Repeat("Lorem ipsum dolor sit amet. ", 11)
	}
	return map[string]any{
		"client_id":        clientID,
		"client_name":      "Acme Agent for Lectern",
		"client_name#fr":   "Agent Acme pour Lectern",
		"client_uri":       "https://" + host + "/",
		"logo_uri":         "https://" + host + "/static/logo-512.png",
		"tos_uri":          "https://" + host + "/legal/terms",
		"policy_uri":       "https://" + host + "/legal/privacy",
		"contacts":         []string{"security@acme.example", "support@acme.example"},
		"software_id":      "0d5f1a8e-5a5b-4b8e-9d0c-0e7c6d1b2a3f",
		"software_version": "4.12.0",
		"redirect_uris": []string{
			"https://" + host + "/oauth/callback",
			"http://127.0.0.1/callback",
			"http://localhost:33418/callback",
			"http://[::1]/callback",
		},
		"post_logout_redirect_uris":             []string{"https://" + host + "/signed-out"},
		"grant_types":                           []string{"authorization_code", "refresh_token"},
		"response_types":                        []string{"code"},
		"token_endpoint_auth_methods_supported": []string{"none"},
		"scope":                                 "openid profile email courses:read offline_access",
		"application_type":                      "native",
		"default_max_age":                       3600,
		"require_auth_time":                     false,
		"client_secret":                         nil, // some serialisers write every field
		"jwks_uri":                              nil,
		"x-acme-build":                          map[string]any{"commit": strings.Repeat("a1b2c3d4", 5), "channel": "stable", "flags": []int{1, 2, 3}},
		"mcp":                                   map[string]any{"transports": []string{"streamable-http"}, "protocol_versions": []string{"2025-06-18", "2025-11-25"}},
		"localized_descriptions":                langs,
	}
}

func TestFetchRealisticDocument(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			c := b.open(t, nil)
			var mu sync.Mutex
			var accept, ua []string
			var body []byte
			srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				accept = append(accept, r.Header.Get("Accept"))
				ua = append(ua, r.Header.Get("User-Agent"))
				mu.Unlock()
				w.Header().Set("Content-Type", "application/json; charset=utf-8")
				w.Header().Set("Cache-Control", "public, max-age=600")
				_, _ = w.Write(body)
			}))
			clientID := srv.url(testHost, "/oauth/client-metadata.json")
			host := testHost + ":" + srv.port
			body = mustJSON(t, realisticDoc(clientID, host))
			if len(body) < 5<<10 || len(body) > 8<<10 {
				t.Fatalf("test document is %d bytes, want 5-8 KB", len(body))
			}
			e := newEnv(t, Options{Cache: c, AllowLoopbackForTests: true})

			doc, err := e.f.Fetch(t.Context(), clientID)
			if err != nil {
				t.Fatal(err)
			}
			want := &Document{
				ClientID:                clientID,
				ClientName:              "Acme Agent for Lectern",
				ClientURI:               "https://" + host + "/",
				LogoURI:                 "https://" + host + "/static/logo-512.png",
				Scope:                   "openid profile email courses:read offline_access",
				TokenEndpointAuthMethod: "none",
				RedirectURIs: []string{
					"https://" + host + "/oauth/callback",
					"http://127.0.0.1/callback",
					"http://localhost:33418/callback",
					"http://[::1]/callback",
				},
				GrantTypes:    []string{"authorization_code", "refresh_token"},
				ResponseTypes: []string{"code"},
				Host:          host,
			}
			if d := cmp.Diff(want, doc); d != "" {
				t.Fatalf("document (-want +got):\n%s", d)
			}
			mu.Lock()
			if accept[0] != "application/json" || !strings.Contains(ua[0], "Lectern") {
				t.Errorf("request had Accept %q, User-Agent %q", accept[0], ua[0])
			}
			mu.Unlock()

			// What is cached is the document as served, for 10 minutes.
			key := cacheKey(clientID)
			if ttl, ok := c.ttl(key); !ok || ttl != 10*time.Minute {
				t.Errorf("cached for %v (written: %v), want 10m", ttl, ok)
			}
			if !strings.HasPrefix(key, "{s0}:cimd:") || len(key) != len("{s0}:cimd:")+64 {
				t.Errorf("cache key %q, want {s0}:cimd:<sha256 hex>", key)
			}
			if got, err := c.Get(t.Context(), key); err != nil || string(got) != string(body) {
				t.Errorf("cached value differs from the document served (err %v)", err)
			}

			// A caller changing its copy does not change what others get.
			doc.RedirectURIs[0] = "https://evil.example/cb"
			doc2, err := e.f.Fetch(t.Context(), clientID)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(want, doc2); d != "" {
				t.Fatalf("second fetch (-want +got):\n%s", d)
			}
			if n := srv.hits.Load(); n != 1 {
				t.Errorf("server hit %d times, want 1 (second fetch from the cache)", n)
			}
			if n := e.dns.count(); n != 1 {
				t.Errorf("%d DNS lookups, want 1", n)
			}
		})
	}
}

func TestFetchCacheTTL(t *testing.T) {
	tests := []struct {
		name   string
		header map[string]string
		want   time.Duration
	}{
		{"max-age below the floor", map[string]string{"Cache-Control": "max-age=60"}, 5 * time.Minute},
		{"max-age above the ceiling", map[string]string{"Cache-Control": "max-age=172800"}, 24 * time.Hour},
		{"max-age within bounds", map[string]string{"Cache-Control": "public, max-age=3600"}, time.Hour},
		{"max-age less Age", map[string]string{"Cache-Control": "max-age=3600", "Age": "600"}, 50 * time.Minute},
		{"no-store", map[string]string{"Cache-Control": "no-store"}, 5 * time.Minute},
		{"no-cache beats max-age", map[string]string{"Cache-Control": "max-age=3600, no-cache"}, 5 * time.Minute},
		{"absent", nil, 5 * time.Minute},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			c := b.open(t, nil)
			e := newEnv(t, Options{Cache: c, AllowLoopbackForTests: true})
			var srv *testServer
			srv = newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				for _, tc := range tests {
					if r.URL.Path == "/"+strings.ReplaceAll(tc.name, " ", "-") {
						for k, v := range tc.header {
							w.Header().Set(k, v)
						}
					}
				}
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write(mustJSON(t, validDoc(srv.url(testHost, r.URL.Path))))
			}))
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					clientID := srv.url(testHost, "/"+strings.ReplaceAll(tc.name, " ", "-"))
					if _, err := e.f.Fetch(t.Context(), clientID); err != nil {
						t.Fatal(err)
					}
					if got, ok := c.ttl(cacheKey(clientID)); !ok || got != tc.want {
						t.Errorf("cached for %v (written: %v), want %v", got, ok, tc.want)
					}
					before := srv.hits.Load()
					if _, err := e.f.Fetch(t.Context(), clientID); err != nil {
						t.Fatal(err)
					}
					if srv.hits.Load() != before {
						t.Error("second fetch went to the server")
					}
				})
			}
		})
	}
}

// fakeClock is a settable clock for the memory cache.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// TestFetchCacheExpiry checks, with the memory cache's clock, that a
// document really is served from the cache until its clamped TTL and
// fetched again after it.
func TestFetchCacheExpiry(t *testing.T) {
	tests := []struct {
		cacheControl string
		ttl          time.Duration
	}{
		{"max-age=60", 5 * time.Minute},
		{"max-age=172800", 24 * time.Hour},
	}
	for _, tc := range tests {
		t.Run(tc.cacheControl, func(t *testing.T) {
			clock := &fakeClock{now: time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)}
			c := backends[0].open(t, clock.Now)
			e := newEnv(t, Options{Cache: c, AllowLoopbackForTests: true})
			var srv *testServer
			srv = newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Cache-Control", tc.cacheControl)
				_, _ = w.Write(mustJSON(t, validDoc(srv.url(testHost, r.URL.Path))))
			}))
			clientID := srv.url(testHost, "/client.json")
			fetch := func(wantHits int64) {
				t.Helper()
				if _, err := e.f.Fetch(t.Context(), clientID); err != nil {
					t.Fatal(err)
				}
				if n := srv.hits.Load(); n != wantHits {
					t.Fatalf("server hit %d times, want %d", n, wantHits)
				}
			}
			fetch(1)
			clock.Advance(tc.ttl - time.Second)
			fetch(1)
			clock.Advance(2 * time.Second)
			fetch(2)
		})
	}
}

func TestFetchFailureNotCached(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			c := b.open(t, nil)
			e := newEnv(t, Options{Cache: c, AllowLoopbackForTests: true})
			var answer atomic.Int32 // 0: 500, 1: invalid document, 2: good document
			var srv *testServer
			srv = newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				doc := validDoc(srv.url(testHost, r.URL.Path))
				switch answer.Load() {
				case 0:
					http.Error(w, "down", http.StatusInternalServerError)
					return
				case 1:
					doc["client_secret"] = "s3cret"
				}
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Cache-Control", "max-age=3600")
				_, _ = w.Write(mustJSON(t, doc))
			}))
			clientID := srv.url(testHost, "/client.json")

			_, err := e.f.Fetch(t.Context(), clientID)
			wantError(t, err, "HTTP status 500")
			answer.Store(1)
			_, err = e.f.Fetch(t.Context(), clientID)
			wantError(t, err, "client secret")
			if n := c.setCount(); n != 0 {
				t.Fatalf("%d cache writes after failures, want 0", n)
			}
			if _, err := c.Get(t.Context(), cacheKey(clientID)); !errors.Is(err, storage.ErrCacheMiss) {
				t.Fatalf("cache after failures: %v, want a miss", err)
			}

			answer.Store(2)
			if _, err := e.f.Fetch(t.Context(), clientID); err != nil {
				t.Fatal(err)
			}
			if _, err := e.f.Fetch(t.Context(), clientID); err != nil {
				t.Fatal(err)
			}
			if n := srv.hits.Load(); n != 3 {
				t.Errorf("server hit %d times, want 3 (two failures, one success, then the cache)", n)
			}
		})
	}
}

// TestFetchAdmitted: admit is asked before a fetch, never for a cached
// document, and its refusal is returned as it is without a request to the
// document's server (the authorization endpoint charges its rate limits
// there).
func TestFetchAdmitted(t *testing.T) {
	e := newEnv(t, Options{Cache: memCache(t), AllowLoopbackForTests: true})
	var srv *testServer
	srv = newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(mustJSON(t, validDoc(srv.url(testHost, r.URL.Path))))
	}))
	refused := errors.New("refused")
	var asked int
	admit := func(ok bool) func(context.Context) error {
		return func(context.Context) error {
			asked++
			if !ok {
				return refused
			}
			return nil
		}
	}
	clientID := srv.url(testHost, "/client.json")
	if _, err := e.f.FetchAdmitted(t.Context(), clientID, admit(false)); err != refused {
		t.Fatalf("refused admission: err = %v, want admit's error as it is", err)
	}
	if n := srv.hits.Load(); n != 0 || asked != 1 {
		t.Fatalf("refused admission: %d requests to the document's server, admit asked %d times; want 0 and 1", n, asked)
	}
	if _, err := e.f.FetchAdmitted(t.Context(), clientID, admit(true)); err != nil {
		t.Fatal(err)
	}
	if _, err := e.f.FetchAdmitted(t.Context(), clientID, admit(false)); err != nil {
		t.Fatalf("a cached document: %v; admit must not be asked", err)
	}
	if n := srv.hits.Load(); n != 1 || asked != 2 {
		t.Fatalf("%d requests to the document's server, admit asked %d times; want 1 and 2 (the cached document costs neither)", n, asked)
	}
}

// TestFetchCoalesces: concurrent fetches of one URL make one request, and
// each caller gets its own copy.
func TestFetchCoalesces(t *testing.T) {
	c := memCache(t)
	e := newEnv(t, Options{Cache: c, AllowLoopbackForTests: true})
	entered := make(chan struct{}, 16)
	release := make(chan struct{})
	var srv *testServer
	srv = newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-release
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(mustJSON(t, validDoc(srv.url(testHost, r.URL.Path))))
	}))
	clientID := srv.url(testHost, "/client.json")

	const n = 8
	docs := make([]*Document, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { docs[i], errs[i] = e.f.Fetch(t.Context(), clientID) })
	}
	<-entered
	// Every caller has looked in the cache; give the last ones a moment to
	// join the flight before the request finishes.
	for c.gets.Load() < n {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	close(release)
	wg.Wait()

	for i := range n {
		if errs[i] != nil {
			t.Fatalf("caller %d: %v", i, errs[i])
		}
	}
	if h := srv.hits.Load(); h != 1 {
		t.Fatalf("server hit %d times by %d concurrent fetches, want 1", h, n)
	}
	docs[0].RedirectURIs[0] = "changed"
	if docs[1].RedirectURIs[0] == "changed" {
		t.Error("concurrent callers share one Document")
	}
}

// TestFetchCallerCancel: a caller that gives up gets an error at once, and
// does not take the shared fetch down with it.
func TestFetchCallerCancel(t *testing.T) {
	e := newEnv(t, Options{AllowLoopbackForTests: true})
	entered := make(chan struct{}, 4)
	release := make(chan struct{})
	var srv *testServer
	srv = newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-release
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(mustJSON(t, validDoc(srv.url(testHost, r.URL.Path))))
	}))
	clientID := srv.url(testHost, "/client.json")

	ctxA, cancelA := context.WithCancel(t.Context())
	errA := make(chan error, 1)
	go func() { _, err := e.f.Fetch(ctxA, clientID); errA <- err }()
	<-entered
	errB := make(chan error, 1)
	go func() { _, err := e.f.Fetch(t.Context(), clientID); errB <- err }()
	for e.cache.gets.Load() < 2 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond)
	cancelA()
	select {
	case err := <-errA:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled caller: %v, want context.Canceled in the chain", err)
		}
		wantError(t, err, "cancelled")
	case <-time.After(2 * time.Second):
		t.Fatal("a cancelled caller still waits for the fetch")
	}
	close(release)
	if err := <-errB; err != nil {
		t.Fatalf("the other caller: %v", err)
	}
	if h := srv.hits.Load(); h != 1 {
		t.Errorf("server hit %d times, want 1", h)
	}
}

// failingCache fails every call, as a cache that cannot be reached does.
type failingCache struct{ storage.Cache }

var errCacheDown = fmt.Errorf("test cache down: %w", storage.ErrUnavailable)

func (failingCache) Get(context.Context, string) ([]byte, error) { return nil, errCacheDown }
func (failingCache) Set(context.Context, string, []byte, time.Duration) error {
	return errCacheDown
}

// TestFetchCacheDown: a cache that cannot be reached does not lock CIMD
// clients out; the fetch goes ahead and the failure is logged.
func TestFetchCacheDown(t *testing.T) {
	e := newEnv(t, Options{Cache: failingCache{}, AllowLoopbackForTests: true})
	var srv *testServer
	srv = newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(mustJSON(t, validDoc(srv.url(testHost, r.URL.Path))))
	}))
	if _, err := e.f.Fetch(t.Context(), srv.url(testHost, "/client.json")); err != nil {
		t.Fatal(err)
	}
	if logs := e.logs.String(); !strings.Contains(logs, "test cache down") {
		t.Errorf("cache failure not logged:\n%s", logs)
	}
}

// TestFetchCachedInvalidDocument: a cached document that no longer passes
// validation (rules tightened since it was stored) is fetched again.
func TestFetchCachedInvalidDocument(t *testing.T) {
	c := memCache(t)
	e := newEnv(t, Options{Cache: c, AllowLoopbackForTests: true})
	var srv *testServer
	srv = newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(mustJSON(t, validDoc(srv.url(testHost, r.URL.Path))))
	}))
	clientID := srv.url(testHost, "/client.json")
	stale := validDoc(clientID)
	stale["token_endpoint_auth_method"] = "client_secret_basic"
	if err := c.Cache.Set(t.Context(), cacheKey(clientID), mustJSON(t, stale), time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, err := e.f.Fetch(t.Context(), clientID); err != nil {
		t.Fatal(err)
	}
	if srv.hits.Load() != 1 {
		t.Error("an invalid cached document was used instead of fetching")
	}
}

// TestFetchIgnoresProxyEnvironment: HTTPS_PROXY must not route fetches
// through a proxy (which would also bypass the address checks).
func TestFetchIgnoresProxyEnvironment(t *testing.T) {
	proxy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxy.Close() })
	var proxied atomic.Int64
	go func() {
		for {
			c, err := proxy.Accept()
			if err != nil {
				return
			}
			proxied.Add(1)
			_ = c.Close()
		}
	}()
	for _, k := range []string{"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"} {
		t.Setenv(k, "http://"+proxy.Addr().String())
	}
	t.Setenv("NO_PROXY", "")
	t.Setenv("no_proxy", "")

	e := newEnv(t, Options{AllowLoopbackForTests: true})
	var srv *testServer
	srv = newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(mustJSON(t, validDoc(srv.url(testHost, r.URL.Path))))
	}))
	if _, err := e.f.Fetch(t.Context(), srv.url(testHost, "/client.json")); err != nil {
		t.Fatal(err)
	}
	if n := proxied.Load(); n != 0 {
		t.Errorf("the proxy got %d connections", n)
	}
}

func TestNewPanicsWithoutCache(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("New without a cache did not panic")
		}
	}()
	New(Options{})
}

func TestNewDefaults(t *testing.T) {
	f := New(Options{Cache: cache.NewMemory(&cache.MemoryOptions{SweepInterval: -1})})
	if f.connectTimeout != 3*time.Second || f.timeout != 5*time.Second || f.maxBytes != 16<<10 || f.allowLoopback {
		t.Errorf("defaults: connect %v, total %v, max %d, loopback %v", f.connectTimeout, f.timeout, f.maxBytes, f.allowLoopback)
	}
}

func TestFetchCallerDeadline(t *testing.T) {
	e := newEnv(t, Options{AllowLoopbackForTests: true})
	release := make(chan struct{})
	var srv *testServer
	srv = newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(mustJSON(t, validDoc(srv.url(testHost, r.URL.Path))))
	}))
	clientID := srv.url(testHost, "/client.json")
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	_, err := e.f.Fetch(ctx, clientID)
	wantError(t, err, "could not be fetched in time")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want context.DeadlineExceeded in the chain", err)
	}
	close(release)

	// A caller that has already gone starts nothing.
	before := srv.hits.Load()
	cancelled, cancel2 := context.WithCancel(t.Context())
	cancel2()
	_, err = e.f.Fetch(cancelled, clientID)
	wantError(t, err, "cancelled")
	time.Sleep(50 * time.Millisecond)
	if srv.hits.Load() != before {
		t.Error("a fetch started for a caller that had gone")
	}
}
