package server

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/lectern/lectern/authserver/scope"
	"github.com/lectern/lectern/internal/telemetry"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/storage/sqlstore/sqltest"
	"github.com/lectern/lectern/storage/storagetest"
	"github.com/lectern/lectern/vocab"
)

// syncBuffer is a log destination the server's goroutines share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func attr(s sdktrace.ReadOnlySpan, key attribute.Key) (attribute.Value, bool) {
	for _, kv := range s.Attributes() {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

// TestTraces: with a tracer provider configured, one request to a site on
// PostgreSQL and Redis yields an HTTP server span named after its route,
// with child spans for the SQL statements and Redis commands it caused,
// all carrying lectern.site_id, and its log line carries the trace id.
func TestTraces(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := telemetry.NewProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(t.Context()) })
	logs := &syncBuffer{}
	logger := slog.New(LogHandler(slog.NewJSONHandler(logs, nil)))
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.DiscardHandler))

	cfg := &Config{
		DatabaseURL: sqltest.PostgresSchemaURL(t), RedisURL: storagetest.RedisURL(t),
		RedisPrefix: "lectern-test:traces:" + rand.Text() + ":", RedisAutoPipeline: true,
		KEK: base64.StdEncoding.EncodeToString(make([]byte, 32)), DataDir: t.TempDir(),
		AccessLog: true, TracerProvider: tp,
	}
	a, err := Open(t.Context(), cfg, logger, OpenOptions{Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	site := &storage.Site{Slug: "traced", Name: "Traced", Origin: "http://traced.test", RegistrationVariant: "B", IDTokensEnabled: true}
	if err := a.Platform.CreateSite(t.Context(), site); err != nil {
		t.Fatal(err)
	}
	redirect := "http://127.0.0.1:9999/cb"
	if err := a.Store.CreateClient(t.Context(), &storage.Client{SiteID: &site.ID, ClientID: "traced-app", Name: "Traced App",
		Audience: storage.AudienceMember, Type: storage.ClientPublic, ApplicationType: "native", RedirectURIs: []string{redirect},
		Scopes: scope.MemberDefault(), Source: storage.SourceAdmin, Reviewed: true}); err != nil {
		t.Fatal(err)
	}
	s, err := New(t.Context(), a)
	if err != nil {
		t.Fatal(err)
	}
	exp.Reset()

	q := url.Values{"response_type": {"code"}, "client_id": {"traced-app"}, "redirect_uri": {redirect}, "scope": {"openid"},
		"state": {"s1"}, "resource": {"http://traced.test"}, "code_challenge": {"E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"}, "code_challenge_method": {"S256"}}
	req := httptest.NewRequest(http.MethodGet, vocab.AuthorizePath+"?"+q.Encode(), nil)
	req.Host = "traced.test"
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if loc := rec.Header().Get("Location"); rec.Code != http.StatusFound || !strings.HasPrefix(loc, "/login") {
		t.Fatalf("authorize: %d %s, want a redirect to sign in", rec.Code, loc)
	}

	spans := exp.GetSpans().Snapshots()
	var server sdktrace.ReadOnlySpan
	for _, sp := range spans {
		if sp.SpanKind() == trace.SpanKindServer {
			server = sp
		}
	}
	if server == nil {
		t.Fatalf("no server span among %d spans", len(spans))
	}
	if server.Name() != "GET "+vocab.AuthorizePath {
		t.Errorf("server span named %q; want the route", server.Name())
	}
	if v, ok := attr(server, telemetry.SiteIDKey); !ok || v.AsInt64() != int64(site.ID) {
		t.Errorf("server span lectern.site_id = %v (%v); want %d", v.String(), ok, site.ID)
	}
	var db, redis int
	for _, sp := range spans {
		if sp.SpanKind() != trace.SpanKindClient {
			continue
		}
		if sp.SpanContext().TraceID() != server.SpanContext().TraceID() {
			t.Errorf("span %q is in another trace", sp.Name())
		}
		if q, _ := attr(sp, "db.query.text"); strings.Contains(q.AsString(), "site_hosts.host") {
			continue // the look-up that finds the site: it cannot know it yet
		}
		v, ok := attr(sp, telemetry.SiteIDKey)
		if !ok || v.AsInt64() != int64(site.ID) {
			t.Errorf("span %q lacks lectern.site_id %d (attributes %v)", sp.Name(), site.ID, sp.Attributes())
		}
		if sys, _ := attr(sp, "db.system.name"); sys.AsString() == "postgresql" {
			db++
			if q, _ := attr(sp, "db.query.text"); strings.Contains(q.AsString(), "traced-app") {
				t.Errorf("SQL span records a value: %s", q.AsString())
			}
		}
		if sys, _ := attr(sp, "db.system"); sys.AsString() == "redis" {
			redis++
		}
	}
	if db == 0 || redis == 0 {
		names := []string{}
		for _, sp := range spans {
			names = append(names, sp.Name())
		}
		t.Fatalf("%d PostgreSQL and %d Redis spans under the request; want both (spans: %v)", db, redis, names)
	}

	var found bool
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["msg"] == "request" && rec["path"] == vocab.AuthorizePath {
			found = true
			if rec["trace_id"] != server.SpanContext().TraceID().String() || rec["span_id"] == nil {
				t.Errorf("access log line %s; want trace_id %s and a span_id", line, server.SpanContext().TraceID())
			}
		}
	}
	if !found {
		t.Fatalf("no access log line for the request in:\n%s", logs.String())
	}
}

// With tracing off (no provider given, none installed) requests are not
// wrapped at all.
func TestTracedHandlerOffIsTheHandler(t *testing.T) {
	if telemetry.Installed() {
		t.Skip("a tracer provider is installed in this process")
	}
	h := http.NotFoundHandler()
	if got := tracedHandler(h, nil, nil); reflect.ValueOf(got).Pointer() != reflect.ValueOf(h).Pointer() {
		t.Fatalf("tracedHandler with tracing off wrapped the handler: %T", got)
	}
	if got := tracedHandler(h, sdktrace.NewTracerProvider(), nil); reflect.ValueOf(got).Pointer() == reflect.ValueOf(h).Pointer() {
		t.Fatal("tracedHandler with a provider did not wrap the handler")
	}
}
