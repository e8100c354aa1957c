// Package telemetry owns OpenTelemetry tracing: the tracer provider built
// from the standard OTEL_* environment variables (off unless an OTLP
// endpoint is configured), and the span processor that puts the site of
// the request (lectern.site_id) on every span started under it, so HTTP,
// database and Redis spans of one site can be found together.
//
// It imports tenant (a leaf) and OpenTelemetry only; the instrumentation
// itself lives where each client is built (otelhttp in internal/server,
// the gorm plugin in storage/sqlstore, redisotel in storage/cache).
package telemetry
