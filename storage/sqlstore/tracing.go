package sqlstore

import (
	"errors"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"gorm.io/gorm"
)

// tracingPlugin starts a client span around every gorm statement, child of
// the span in the statement's context (the request's), named after the
// operation and table, with the SQL text but never its values (they hold
// token hashes and e-mail addresses). It is ours rather than gorm's
// official plugin (gorm.io/plugin/opentelemetry), which links the MySQL,
// SQL Server and ClickHouse drivers into every binary to name their
// servers. The statements sqlstore sends on database/sql directly (the
// batched token-path writes) have no span.
type tracingPlugin struct {
	tracer trace.Tracer
	system string
}

const tracingSpanKey = "lectern:otel-span"

func newTracingPlugin(tp trace.TracerProvider, dialect string) *tracingPlugin {
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	system := "postgresql"
	if dialect == SQLite {
		system = "sqlite"
	}
	return &tracingPlugin{tracer: tp.Tracer("github.com/lectern/lectern/storage/sqlstore"), system: system}
}

func (p *tracingPlugin) Name() string { return "lectern:tracing" }

// registrar is a gorm callback position (Before/After a named callback).
type registrar interface {
	Register(string, func(*gorm.DB)) error
}

func (p *tracingPlugin) Initialize(db *gorm.DB) error {
	cb := db.Callback()
	for _, r := range []struct {
		op            string
		before, after registrar
	}{
		{"INSERT", cb.Create().Before("gorm:create"), cb.Create().After("gorm:create")},
		{"SELECT", cb.Query().Before("gorm:query"), cb.Query().After("gorm:query")},
		{"UPDATE", cb.Update().Before("gorm:update"), cb.Update().After("gorm:update")},
		{"DELETE", cb.Delete().Before("gorm:delete"), cb.Delete().After("gorm:delete")},
		{"ROW", cb.Row().Before("gorm:row"), cb.Row().After("gorm:row")},
		{"RAW", cb.Raw().Before("gorm:raw"), cb.Raw().After("gorm:raw")},
	} {
		if err := r.before.Register("lectern:otel_before_"+r.op, p.before(r.op)); err != nil {
			return err
		}
		if err := r.after.Register("lectern:otel_after_"+r.op, p.after); err != nil {
			return err
		}
	}
	return nil
}

func (p *tracingPlugin) before(op string) func(*gorm.DB) {
	return func(db *gorm.DB) {
		ctx := db.Statement.Context
		if ctx == nil || !trace.SpanFromContext(ctx).SpanContext().IsValid() {
			// No request span: start no root span per statement
			// (background work and start-up checks).
			return
		}
		name := op
		if t := db.Statement.Table; t != "" {
			name += " " + t
		}
		ctx, span := p.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(attribute.String("db.system.name", p.system), attribute.String("db.operation.name", op)))
		db.Statement.Context = ctx
		db.InstanceSet(tracingSpanKey, span)
	}
}

func (p *tracingPlugin) after(db *gorm.DB) {
	v, ok := db.InstanceGet(tracingSpanKey)
	if !ok {
		return
	}
	span := v.(trace.Span)
	defer span.End()
	if t := db.Statement.Table; t != "" {
		span.SetAttributes(attribute.String("db.collection.name", t))
	}
	if q := db.Statement.SQL.String(); q != "" {
		span.SetAttributes(attribute.String("db.query.text", q))
	}
	span.SetAttributes(attribute.Int64("db.response.returned_rows", db.Statement.RowsAffected))
	if err := db.Error; err != nil && !errors.Is(err, gorm.ErrRecordNotFound) {
		span.RecordError(err)
		span.SetStatus(codes.Error, "database error")
	}
}
