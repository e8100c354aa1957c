package server

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/lectern/lectern/internal/telemetry"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/vocab"
)

// observedHost is the site of observedServer.
const observedHost = "observed.test"

// observedServer is a server over the embedded store with one http site
// (observedHost), the access log on, logging JSON to the returned buffer,
// and the trusted proxies given.
func observedServer(t *testing.T, proxies string) (*Server, *syncBuffer) {
	t.Helper()
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.DiscardHandler))
	logs := &syncBuffer{}
	logger := slog.New(LogHandler(slog.NewJSONHandler(logs, nil)))
	cfg := &Config{DataDir: t.TempDir(), AccessLog: true, TrustedProxies: proxies, Pprof: true}
	a, err := Open(context.Background(), cfg, logger, OpenOptions{Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	site := &storage.Site{Slug: "observed", Name: "Observed", Origin: "http://" + observedHost, RegistrationVariant: "B"}
	if err := a.Platform.CreateSite(context.Background(), site); err != nil {
		t.Fatal(err)
	}
	s, err := New(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	return s, logs
}

// accessLines are the access-log lines of path in logs.
func accessLines(t *testing.T, logs *syncBuffer, path string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["msg"] == "request" && rec["path"] == path {
			out = append(out, rec)
		}
	}
	return out
}

// serveFrom answers a GET of path at host from the peer remote with the
// headers hdr (name, value, ...) through h.
func serveFrom(h http.Handler, method, host, path, remote string, hdr ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, nil)
	req.Host, req.RemoteAddr = host, remote
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// The access log's remote is the address audit events and rate limits
// record (tenant.ClientIP): the peer, whatever X-Forwarded-For or
// X-Real-IP a client sends; behind a trusted proxy the right-most
// X-Forwarded-For value, the one the proxy appended.
func TestAccessLogRemoteIsTheClientIP(t *testing.T) {
	for _, c := range []struct {
		name, proxies, remote, xff, realIP, want string
	}{
		{"untrusted, X-Forwarded-For", "", "192.0.2.10:5000", "6.6.6.6", "", "192.0.2.10"},
		{"untrusted, X-Real-IP", "", "192.0.2.10:5000", "", "198.51.100.77", "192.0.2.10"},
		{"untrusted, text", "", "192.0.2.10:5000", `"fake\" level=ERROR msg=pwned`, "", "192.0.2.10"},
		{"trusted proxy", "192.0.2.10", "192.0.2.10:5000", "6.6.6.6, 7.7.7.7", "8.8.8.8", "7.7.7.7"},
		{"trusted list, other peer", "192.0.2.10", "192.0.2.11:5000", "6.6.6.6, 7.7.7.7", "", "192.0.2.11"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, logs := observedServer(t, c.proxies)
			rec := serveFrom(s, http.MethodGet, observedHost, vocab.JWKSPath, c.remote, "X-Forwarded-For", c.xff, "X-Real-IP", c.realIP)
			if rec.Code != http.StatusOK {
				t.Fatalf("JWKS: %d %s", rec.Code, rec.Body)
			}
			lines := accessLines(t, logs, vocab.JWKSPath)
			if len(lines) != 1 || lines[0]["remote"] != c.want {
				t.Fatalf("access log %v; want one line with remote %q", lines, c.want)
			}
		})
	}
}

// A request id is taken from a trusted proxy only; anyone else's is
// replaced, so no client can give its requests another's id.
func TestRequestIDFromTrustedProxiesOnly(t *testing.T) {
	const id = "990f534a58727df2a23bc2d1"
	for _, c := range []struct {
		proxies, remote string
		kept            bool
	}{
		{"", "192.0.2.10:5000", false},
		{"192.0.2.0/24", "198.51.100.1:5000", false},
		{"192.0.2.0/24", "192.0.2.10:5000", true},
	} {
		s, logs := observedServer(t, c.proxies)
		rec := serveFrom(s, http.MethodGet, observedHost, vocab.JWKSPath, c.remote, echo.HeaderXRequestID, id)
		got := rec.Header().Get(echo.HeaderXRequestID)
		if (got == id) != c.kept || !validRequestID(got) {
			t.Errorf("proxies %q, peer %s: X-Request-Id %q; kept %v, want kept %v", c.proxies, c.remote, got, got == id, c.kept)
		}
		if lines := accessLines(t, logs, vocab.JWKSPath); len(lines) != 1 || lines[0]["request_id"] != got {
			t.Errorf("proxies %q, peer %s: access log %v; want request_id %q", c.proxies, c.remote, lines, got)
		}
	}
}

// A trace context is continued from a trusted proxy only. Anyone else's
// starts a new root span, linked to it: a client can neither put its
// requests in another trace nor keep them out of the traces (a sampled
// flag of 00). The span's client.address is the client's address as
// ClientIP has it, not X-Forwarded-For.
func TestTraceContextFromTrustedProxiesOnly(t *testing.T) {
	const (
		remoteTrace = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		remoteSpan  = "bbbbbbbbbbbbbbbb"
	)
	// telemetry.Setup installs the W3C propagator; the test does as it.
	defer otel.SetTextMapPropagator(otel.GetTextMapPropagator())
	otel.SetTextMapPropagator(propagation.TraceContext{})
	for _, c := range []struct {
		name, remote, flags string
		continued           bool
		client              string
	}{
		{"untrusted, unsampled", "198.51.100.1:5000", "00", false, "198.51.100.1"},
		{"untrusted, sampled", "198.51.100.1:5000", "01", false, "198.51.100.1"},
		{"trusted proxy", "192.0.2.10:5000", "01", true, "7.7.7.7"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, logs := observedServer(t, "192.0.2.10")
			exp := tracetest.NewInMemoryExporter()
			tp := telemetry.NewProvider(sdktrace.WithSyncer(exp))
			t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
			h := tracedHandler(s.echo, tp, s.siteOptions.TrustedProxies)
			rec := serveFrom(h, http.MethodGet, observedHost, vocab.JWKSPath, c.remote,
				"traceparent", "00-"+remoteTrace+"-"+remoteSpan+"-"+c.flags, "X-Forwarded-For", "6.6.6.6, 7.7.7.7")
			if rec.Code != http.StatusOK {
				t.Fatalf("JWKS: %d", rec.Code)
			}
			var server sdktrace.ReadOnlySpan
			for _, sp := range exp.GetSpans().Snapshots() {
				if sp.SpanKind() == trace.SpanKindServer {
					server = sp
				}
			}
			if server == nil {
				t.Fatal("no server span exported")
			}
			tid := server.SpanContext().TraceID().String()
			if (tid == remoteTrace) != c.continued {
				t.Errorf("server span in trace %s; continued %v, want %v", tid, tid == remoteTrace, c.continued)
			}
			if !c.continued {
				links := server.Links()
				if len(links) != 1 || links[0].SpanContext.TraceID().String() != remoteTrace || links[0].SpanContext.SpanID().String() != remoteSpan {
					t.Errorf("new root span's links %v; want the remote span", links)
				}
			}
			if v, ok := attr(server, "client.address"); !ok || v.AsString() != c.client {
				t.Errorf("client.address %q (%v); want %q", v.AsString(), ok, c.client)
			}
			if lines := accessLines(t, logs, vocab.JWKSPath); len(lines) != 1 || lines[0]["trace_id"] != tid {
				t.Errorf("access log %v; want trace_id %s", lines, tid)
			}
		})
	}
}

// Requests the Host resolution answers itself (unknown host 404,
// malformed 400) are counted under the route "unresolved_host", with no
// host label, and access-logged.
func TestUnresolvedHostsCountedAndLogged(t *testing.T) {
	s, logs := observedServer(t, "")
	for i, host := range []string{"probe1.example", "probe2.example", "probe3.example", "bad host"} {
		path := "/some/path-" + string(rune('a'+i))
		rec := serveFrom(s, http.MethodGet, host, path, "192.0.2.10:5000")
		if rec.Code != http.StatusNotFound && rec.Code != http.StatusBadRequest {
			t.Fatalf("%s: %d", host, rec.Code)
		}
		lines := accessLines(t, logs, path)
		if len(lines) != 1 || lines[0]["status"] != float64(rec.Code) || lines[0]["remote"] != "192.0.2.10" || lines[0]["request_id"] != rec.Header().Get(echo.HeaderXRequestID) {
			t.Errorf("%s%s: access log %v; want one line with status %d, the peer and the request id", host, path, lines, rec.Code)
		}
	}
	mfs, err := s.registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "lectern_http_requests_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			l := map[string]string{}
			for _, p := range m.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			if len(l) != 3 {
				t.Errorf("series with labels %v; want route, method and code only", l)
			}
			counts[l["method"]+" "+l["route"]+" "+l["code"]] += m.GetCounter().GetValue()
		}
	}
	if got := counts["GET "+unresolvedRoute+" 4xx"]; got != 4 {
		t.Errorf("unresolved_host requests: %v; want 4 (all: %v)", got, counts)
	}
}

// A 405 repeats at most 32 bytes of the method: a client may send 60 kB
// of one. The access log cuts it the same way.
func TestMethodNotAllowedEchoBounded(t *testing.T) {
	s, logs := observedServer(t, "")
	method := strings.Repeat("A", 60_000)
	rec := serveFrom(s, method, observedHost, vocab.TokenPath, "192.0.2.10:5000")
	if rec.Code != http.StatusMethodNotAllowed {
		t.Fatalf("%d %.200s", rec.Code, rec.Body)
	}
	if n := rec.Body.Len(); n > 300 || !strings.Contains(rec.Body.String(), "method "+strings.Repeat("A", maxMethodEcho)+" is not allowed here") {
		t.Errorf("405 body of %d bytes: %.300s; want the method cut to %d bytes", n, rec.Body, maxMethodEcho)
	}
	lines := accessLines(t, logs, vocab.TokenPath)
	if len(lines) != 1 || len(lines[0]["method"].(string)) > maxMethodEcho {
		t.Errorf("access log of the 405: %.300v; want the method cut to %d bytes", lines, maxMethodEcho)
	}
}

// The profiler on the metrics listener does not show the command line,
// whose flags may hold secrets (--kek, --database-url); the profiles are
// there.
func TestPprofHasNoCmdline(t *testing.T) {
	s, _ := observedServer(t, "")
	ops := s.OpsHandler()
	for path, want := range map[string]int{"/debug/pprof/cmdline": 404, "/debug/pprof/symbol": 200, "/debug/pprof/": 200} {
		rec := serveFrom(ops, http.MethodGet, "127.0.0.1:9090", path, "127.0.0.1:5000")
		body, _ := io.ReadAll(rec.Body)
		if rec.Code != want || strings.Contains(string(body), "test") && path == "/debug/pprof/cmdline" {
			t.Errorf("%s: %d %.200q; want %d", path, rec.Code, body, want)
		}
	}
}
