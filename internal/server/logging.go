package server

import (
	"context"
	"log/slog"

	"go.opentelemetry.io/otel/trace"

	"github.com/lectern/lectern/tenant"
)

// LogHandler wraps h so that every record logged with a request's context
// carries its request id and site (after dex's request-context logging),
// and, when the request is traced, its trace_id and span_id.
// Loggers handed to Open should use it.
func LogHandler(h slog.Handler) slog.Handler { return contextHandler{h} }

type contextHandler struct{ slog.Handler }

func (h contextHandler) Handle(ctx context.Context, r slog.Record) error {
	if id := tenant.RequestID(ctx); id != "" {
		r.AddAttrs(slog.String("request_id", id))
	}
	if s, ok := tenant.FromContext(ctx); ok {
		r.AddAttrs(slog.String("site", s.Slug))
	}
	// With tracing on, a log line leads to its trace and span.
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		r.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	return h.Handler.Handle(ctx, r)
}

func (h contextHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return contextHandler{h.Handler.WithAttrs(as)}
}

func (h contextHandler) WithGroup(name string) slog.Handler {
	return contextHandler{h.Handler.WithGroup(name)}
}
