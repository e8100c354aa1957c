package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lectern/lectern/discovery"
	"github.com/lectern/lectern/internal/server"
	"github.com/lectern/lectern/vocab"
)

// SIGTERM (the serve context ending) lets an in-flight request finish.
func TestGracefulShutdownFinishesInFlight(t *testing.T) {
	started := make(chan struct{})
	ts := startServer(t, backend{name: "embedded"}, &serverOptions{beforeServe: func(s *server.Server) {
		s.Router().GET("/slow", func(c echoContext) error {
			close(started)
			time.Sleep(500 * time.Millisecond)
			return c.String(http.StatusOK, "finished")
		})
	}})
	var wg sync.WaitGroup
	wg.Add(1)
	var code int
	var body []byte
	go func() {
		defer wg.Done()
		code, _, body = ts.get(t, ts.academy(), "/slow")
	}()
	<-started
	if err := ts.stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	wg.Wait()
	if code != 200 || string(body) != "finished" {
		t.Fatalf("in-flight request got %d %q; want 200 finished", code, body)
	}
}

func TestRoutingErrorsAreJSON(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	for _, tc := range []struct {
		path   string
		status int
		code   string
	}{
		{"/no/such/page", 404, "not_found"},
		{"/.well-known/oauth-protected-resource/mcp", 404, "not_found"},
		{"/.well-known/oauth-authorization-server/extra", 404, "not_found"},
		{vocab.TokenPath, 405, "method_not_allowed"}, // GET on a POST endpoint
	} {
		code, hdr, body := ts.get(t, ts.academy(), tc.path)
		var e oauthError
		if code != tc.status || !strings.HasPrefix(hdr.Get("Content-Type"), "application/json") || json.Unmarshal(body, &e) != nil || e.Error != tc.code {
			t.Errorf("GET %s: %d %s %s; want %d %s", tc.path, code, hdr.Get("Content-Type"), body, tc.status, tc.code)
		}
	}
}

func TestMetricsAndHealth(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	ops := startOps(t, ts)
	var prm discovery.ProtectedResourceMetadata
	ts.getJSON(t, ts.academy(), vocab.ProtectedResourcePath, 200, &prm)
	code, _, body := ops.get(t, "/metrics")
	if code != 200 || !strings.Contains(string(body), `lectern_http_requests_total{code="2xx",method="GET",route="/.well-known/oauth-protected-resource"}`) {
		t.Fatalf("/metrics: %d\n%s", code, body)
	}
	// Methods are labels only when standard: made-up methods cannot mint
	// series.
	for i := range 20 {
		req, _ := http.NewRequest(fmt.Sprintf("M%d%s", i, strings.Repeat("Y", 2000)), ts.academy()+"/x", nil)
		if resp, err := ts.client.Do(req); err == nil {
			resp.Body.Close()
		}
	}
	_, _, body = ops.get(t, "/metrics")
	if strings.Contains(string(body), "YYYY") || !strings.Contains(string(body), `method="OTHER"`) {
		t.Fatalf("made-up methods in the metrics:\n%.2000s", body)
	}
	// Probes address the pod, not a site: any Host, on both listeners.
	for _, get := range []func(*testing.T, string) (int, http.Header, []byte){
		func(t *testing.T, p string) (int, http.Header, []byte) { return ts.get(t, "http://10.1.2.3:8080", p) },
		ops.get,
	} {
		for _, p := range []string{"/healthz", "/readyz"} {
			if code, _, body := get(t, p); code != 200 || !strings.Contains(string(body), `"status":"ok"`) {
				t.Fatalf("%s: %d %s", p, code, body)
			}
		}
	}
}

// /metrics and the profiler are never served on a site's origin (nor on
// any Host of the main listener): only on the metrics listener, the
// profiler only with --pprof.
func TestMetricsOnlyOnTheMetricsListener(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	for _, origin := range []string{ts.academy(), ts.open(), "http://10.1.2.3:8080"} {
		for _, p := range []string{"/metrics", "/debug/pprof/", "/debug/pprof/cmdline"} {
			code, _, body := ts.get(t, origin, p)
			var e oauthError
			if code != 404 || json.Unmarshal(body, &e) != nil || e.Error != "not_found" {
				t.Errorf("%s%s on the main listener: %d %.200s; want 404 JSON", origin, p, code, body)
			}
		}
	}
	ops := startOps(t, ts)
	if code, _, _ := ops.get(t, "/debug/pprof/"); code != 404 {
		t.Errorf("pprof without --pprof: %d", code)
	}
	withPprof := startOps(t, startServer(t, backend{name: "embedded"}, &serverOptions{configure: func(c *server.Config) { c.Pprof = true }}))
	if code, _, body := withPprof.get(t, "/debug/pprof/symbol"); code != 200 || len(body) == 0 {
		t.Errorf("pprof with --pprof: %d", code)
	}
	// Not the command line: its flags may hold secrets (--kek, --database-url).
	if code, _, _ := withPprof.get(t, "/debug/pprof/cmdline"); code != 404 {
		t.Errorf("pprof cmdline with --pprof: %d; want 404", code)
	}
}

// opsListener is a test server's metrics listener (--metrics-addr).
type opsListener struct {
	client *http.Client
	base   string
}

// startOps serves ts's metrics listener on a loopback port until the test ends.
func startOps(t *testing.T, ts *testServer) *opsListener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ts.srv.ServeOps(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("metrics listener: %v", err)
		}
	})
	return &opsListener{client: &http.Client{Timeout: 10 * time.Second}, base: "http://" + ln.Addr().String()}
}

func (o *opsListener) get(t *testing.T, path string) (int, http.Header, []byte) {
	t.Helper()
	resp, err := o.client.Get(o.base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, body
}

// Documents answer HEAD like GET, without a body; the metadata answers
// CORS preflights from any origin (browser MCP clients send
// MCP-Protocol-Version, which needs one).
func TestHeadAndPreflight(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	for _, path := range []string{vocab.ProtectedResourcePath, vocab.AuthorizationServerPath, vocab.OpenIDConfigurationPath,
		vocab.JWKSPath, vocab.OpenAPIPath, "/healthz", "/readyz", "/auth.md", "/llms.txt"} {
		get, err := ts.client.Get(ts.academy() + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(get.Body)
		get.Body.Close()
		head, err := ts.client.Head(ts.academy() + path)
		if err != nil {
			t.Fatal(err)
		}
		hb, _ := io.ReadAll(head.Body)
		head.Body.Close()
		if head.StatusCode != get.StatusCode || len(hb) != 0 || head.Header.Get("Content-Type") != get.Header.Get("Content-Type") || len(body) == 0 {
			t.Errorf("HEAD %s: %d %q (%d body bytes); GET %d %q", path, head.StatusCode, head.Header.Get("Content-Type"), len(hb), get.StatusCode, get.Header.Get("Content-Type"))
		}
	}
	for _, path := range []string{vocab.ProtectedResourcePath, vocab.AuthorizationServerPath, vocab.JWKSPath} {
		req, _ := http.NewRequest(http.MethodOptions, ts.academy()+path, nil)
		req.Header.Set("Origin", "https://inspector.example")
		req.Header.Set("Access-Control-Request-Method", "GET")
		req.Header.Set("Access-Control-Request-Headers", "mcp-protocol-version")
		resp, err := ts.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		h := resp.Header
		if resp.StatusCode != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != "*" || h.Get("Access-Control-Allow-Headers") != "*" ||
			!strings.Contains(h.Get("Access-Control-Allow-Methods"), "GET") {
			t.Errorf("preflight of %s: %d %v", path, resp.StatusCode, h)
		}
	}
	// Pages with effects do not take HEAD.
	if resp, err := ts.client.Head(ts.academy() + vocab.AuthorizePath); err != nil || resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("HEAD /oauth/authorize: %v %v", resp, err)
	}
}
