package integration

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/lectern/lectern/authserver/password"
	"github.com/lectern/lectern/internal/demo"
	"github.com/lectern/lectern/internal/server"
	"github.com/lectern/lectern/storage/sqlstore/sqltest"
	"github.com/lectern/lectern/storage/storagetest"
)

// backend names the stores a test server runs on.
type backend struct {
	name        string
	databaseURL string // "" → embedded SQLite under the data dir
	redisURL    string // "" → in-memory cache
}

// eachBackend runs f on the embedded default and on PostgreSQL + Redis.
func eachBackend(t *testing.T, f func(t *testing.T, b backend)) {
	t.Run("embedded", func(t *testing.T) { f(t, backend{name: "embedded"}) })
	t.Run("postgres+redis", func(t *testing.T) {
		f(t, backend{name: "postgres+redis", databaseURL: sqltest.PostgresSchemaURL(t), redisURL: storagetest.RedisURL(t)})
	})
}

// testServer is a real lectern server on a loopback port, seeded with the
// demo, as `lectern serve` runs it.
type testServer struct {
	app    *server.App
	srv    *server.Server
	addr   string // where it listens
	port   int    // the demo origins' port (the first replica's)
	client *http.Client
	logs   *syncBuffer
	stop   func() error
}

type serverOptions struct {
	// configure adjusts the configuration before the app opens.
	configure func(*server.Config)
	// beforeServe runs after the server is built and before it listens.
	beforeServe func(*server.Server)
	// originPort, when set, means the demo is seeded already for that port
	// (a second replica on the same stores).
	originPort int
	// passwords are the argon2id parameters of new passwords; nil:
	// fastPasswords.
	passwords *password.Params
}

func startServer(t *testing.T, b backend, o *serverOptions) *testServer {
	t.Helper()
	if o == nil {
		o = &serverOptions{}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	cfg := &server.Config{
		DatabaseURL: b.databaseURL, RedisURL: b.redisURL,
		RedisPrefix: "lectern-test-" + randomHex(6) + ":",
		DataDir:     t.TempDir(), AccessLog: true, RedisAutoPipeline: true,
	}
	if b.databaseURL != "" {
		cfg.KEK = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
	}
	if o.configure != nil {
		o.configure(cfg)
	}
	logs := &syncBuffer{}
	logger := slog.New(server.LogHandler(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	ctx := context.Background()
	a, err := server.Open(ctx, cfg, logger, server.OpenOptions{Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	a.Platform.PasswordParams = fastPasswords
	if o.passwords != nil {
		a.Platform.PasswordParams = *o.passwords
	}
	// Every key any request builds must carry a Redis Cluster hash tag.
	tags := storagetest.NewTagChecker(a.Cache)
	a.Cache, a.Platform.Cache = tags, tags
	t.Cleanup(func() {
		if keys := tags.Untagged(); len(keys) > 0 {
			t.Errorf("cache keys without a hash tag (storage.CacheKey or storage.PlatformKey): %q", keys)
		}
	})
	if o.originPort == 0 {
		if _, err := demo.Seed(ctx, a.Platform, a.Store, port, time.Now()); err != nil {
			t.Fatal(err)
		}
	} else {
		port = o.originPort
	}
	s, err := server.New(ctx, a)
	if err != nil {
		a.Close()
		t.Fatal(err)
	}
	if o.beforeServe != nil {
		o.beforeServe(s)
	}
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.Serve(sctx, ln) }()
	ts := &testServer{app: a, srv: s, addr: ln.Addr().String(), port: port, logs: logs, client: loopbackClient(ln.Addr().String())}
	eventually(t, 5*time.Second, func() error {
		resp, err := ts.client.Get("http://" + ln.Addr().String() + "/healthz")
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	})
	var once sync.Once
	var stopErr error
	ts.stop = func() error {
		once.Do(func() {
			cancel()
			stopErr = <-done
			a.Close()
		})
		return stopErr
	}
	t.Cleanup(func() {
		if err := ts.stop(); err != nil {
			t.Errorf("server stop: %v", err)
		}
		if t.Failed() {
			t.Logf("server log:\n%s", logs.String())
		}
	})
	return ts
}

// fastPasswords keeps test logins quick; the hash format is the same.
var fastPasswords = password.Params{Memory: 1024, Time: 1, Threads: 1, KeyLen: 32, SaltLen: 16}

// loopbackClient dials addr whatever the URL's host, so that requests for
// http://localhost:PORT and http://127.0.0.1:PORT reach the same server with
// their own Host headers. It does not follow redirects.
func loopbackClient(addr string) *http.Client {
	d := &net.Dialer{Timeout: 5 * time.Second}
	return &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, addr)
		}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

func (ts *testServer) academy() string { return demo.AcademyOrigin(ts.port) }
func (ts *testServer) open() string    { return demo.OpenOrigin(ts.port) }

// get fetches origin+path and returns status, headers and body.
func (ts *testServer) get(t *testing.T, origin, path string, hdr ...string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, origin+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Host" {
			req.Host = hdr[i+1]
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := ts.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, body
}

// getJSON fetches and decodes a JSON document, failing unless status is want.
func (ts *testServer) getJSON(t *testing.T, origin, path string, want int, v any) http.Header {
	t.Helper()
	code, hdr, body := ts.get(t, origin, path)
	if code != want {
		t.Fatalf("GET %s%s: status %d, want %d; body %s", origin, path, code, want, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("GET %s%s: body is not JSON: %v\n%s", origin, path, err, body)
	}
	return hdr
}

// oauthError decodes an RFC 6749 §5.2 error body.
type oauthError struct {
	Error       string `json:"error"`
	Description string `json:"error_description"`
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// eventually retries f until it returns nil or the timeout passes.
func eventually(t *testing.T, timeout time.Duration, f func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var err error
	for time.Now().Before(deadline) {
		if err = f(); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("not within %s: %v", timeout, err)
}

type echoContext = echo.Context

func base64URLDecode(s string) ([]byte, error) { return base64.RawURLEncoding.DecodeString(s) }

func mustURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}
