package telemetry

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/otel"
)

func TestEnabled(t *testing.T) {
	for _, c := range []struct {
		name string
		env  map[string]string
		want bool
		err  bool
	}{
		{"nothing set: off", nil, false, false},
		{"endpoint: on", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, true, false},
		{"traces endpoint: on", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"}, true, false},
		{"none wins over an endpoint", map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, false, false},
		{"otlp without endpoint: off", map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, false, false},
		{"unknown exporter: error", map[string]string{"OTEL_TRACES_EXPORTER": "zipkin", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c"}, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Enabled(func(k string) string { return c.env[k] })
			if got != c.want || (err != nil) != c.err {
				t.Errorf("Enabled = %v, %v; want %v, error %v", got, err, c.want, c.err)
			}
		})
	}
}

// With an OTLP/HTTP endpoint set, spans reach the collector by the time
// the returned shutdown function returns.
func TestSetupExportsOverOTLPHTTP(t *testing.T) {
	var posts atomic.Int32
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/v1/traces" {
			posts.Add(1)
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer collector.Close()
	prev := otel.GetTracerProvider()
	defer otel.SetTracerProvider(prev)
	// The exporter reads the process environment itself, as in production.
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	stop, err := Setup(context.Background(), os.Getenv, "test")
	if err != nil {
		t.Fatal(err)
	}
	_, span := otel.Tracer("test").Start(context.Background(), "work")
	span.End()
	if err := stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if posts.Load() == 0 {
		t.Fatal("no spans reached the OTLP endpoint")
	}
}
