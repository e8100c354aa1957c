package telemetry

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

// Enabled reports whether the environment asks for traces:
// OTEL_TRACES_EXPORTER is "otlp" (or unset) and an OTLP endpoint is set
// (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT).
// OTEL_TRACES_EXPORTER=none, or no endpoint, leaves tracing off.
func Enabled(getenv func(string) string) (bool, error) {
	switch exp := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")); exp {
	case "none":
		return false, nil
	case "", "otlp":
	default:
		return false, fmt.Errorf("OTEL_TRACES_EXPORTER=%q: only otlp and none are supported", exp)
	}
	return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "", nil
}

// installed is set once Setup installed a global tracer provider.
var installed atomic.Bool

// Installed reports whether Setup installed the global tracer provider
// (tracing is on). While it is off, the global provider is OpenTelemetry's
// no-op and the global propagator extracts nothing: instrumentation that
// would only make non-recording spans can be left out.
func Installed() bool { return installed.Load() }

// Setup installs the global tracer provider and W3C propagators when the
// environment enables tracing (see Enabled), exporting over OTLP: gRPC when
// OTEL_EXPORTER_OTLP_TRACES_PROTOCOL or OTEL_EXPORTER_OTLP_PROTOCOL is
// "grpc", HTTP/protobuf otherwise. The exporters read endpoint, headers,
// TLS and timeouts from the process environment (the standard variables); the SDK reads the sampler
// (OTEL_TRACES_SAMPLER) and resource (OTEL_SERVICE_NAME,
// OTEL_RESOURCE_ATTRIBUTES). The returned function flushes and stops it;
// with tracing off it does nothing.
func Setup(ctx context.Context, getenv func(string) string, version string) (func(context.Context) error, error) {
	noop := func(context.Context) error { return nil }
	on, err := Enabled(getenv)
	if err != nil || !on {
		return noop, err
	}
	var exp *otlptrace.Exporter
	proto := getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if proto == "" {
		proto = getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	switch proto {
	case "grpc":
		exp, err = otlptracegrpc.New(ctx)
	case "", "http/protobuf":
		exp, err = otlptracehttp.New(ctx)
	default:
		return noop, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=%q: want grpc or http/protobuf", proto)
	}
	if err != nil {
		return noop, fmt.Errorf("OTLP trace exporter: %w", err)
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(semconv.ServiceVersion(version)))
	if err != nil && !errors.Is(err, resource.ErrSchemaURLConflict) {
		return noop, err
	}
	if getenv("OTEL_SERVICE_NAME") == "" && !strings.Contains(getenv("OTEL_RESOURCE_ATTRIBUTES"), "service.name=") {
		res, _ = resource.Merge(res, resource.NewSchemaless(semconv.ServiceName("lectern")))
	}
	tp := NewProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	otel.SetTracerProvider(tp)
	installed.Store(true)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	return func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		return tp.Shutdown(ctx)
	}, nil
}

// NewProvider is sdktrace.NewTracerProvider with the site processor
// first, so every exporter sees lectern.site_id. Tests pass an in-memory
// exporter.
func NewProvider(opts ...sdktrace.TracerProviderOption) *sdktrace.TracerProvider {
	return sdktrace.NewTracerProvider(append([]sdktrace.TracerProviderOption{sdktrace.WithSpanProcessor(SiteProcessor{})}, opts...)...)
}
