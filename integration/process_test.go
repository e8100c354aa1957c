package integration

import (
	"encoding/json"
	"fmt"
	"io"
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
	var prm discovery.ProtectedResourceMetadata
	ts.getJSON(t, ts.academy(), vocab.ProtectedResourcePath, 200, &prm)
	// Probes and scrapes address the pod, not a site.
	code, _, body := ts.get(t, "http://10.1.2.3:8080", "/metrics")
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
	_, _, body = ts.get(t, "http://10.1.2.3:8080", "/metrics")
	if strings.Contains(string(body), "YYYY") || !strings.Contains(string(body), `method="OTHER"`) {
		t.Fatalf("made-up methods in the metrics:\n%.2000s", body)
	}
	if code, _, _ := ts.get(t, "http://10.1.2.3:8080", "/healthz"); code != 200 {
		t.Fatalf("/healthz %d", code)
	}
	if code, _, _ := ts.get(t, "http://10.1.2.3:8080", "/readyz"); code != 200 {
		t.Fatalf("/readyz %d", code)
	}
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
