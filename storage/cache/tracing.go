package cache

import (
	"context"
	"errors"
	"strings"

	"github.com/redis/go-redis/extra/redisotel/v9"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

const tracerName = "github.com/lectern/lectern/storage/cache"

// instrument adds redisotel's tracing hook: a span per command, child of
// the caller's, with neither keys nor values (they name sessions and
// tokens). The autopipeliner runs its commands' hooks on its own
// goroutines, some outside the caller's context, where each would start a
// trace of its own: those commands (and pipelines, which only it sends)
// are left out here, and submit traces them in the caller's context
// instead. Connection set-up (dial, HELLO, AUTH) is left out too.
func (r *Redis) instrument(tp trace.TracerProvider) error {
	return redisotel.InstrumentTracing(r.rdb, redisotel.WithTracerProvider(tp),
		redisotel.WithDBStatement(false), redisotel.WithCallerEnabled(false), redisotel.WithDialFilter(true),
		redisotel.WithCommandFilter(func(cmd redis.Cmder) bool {
			if _, ok := r.piped.Load(cmd); ok {
				return true
			}
			n := strings.ToLower(cmd.Name())
			return n == "auth" || n == "hello"
		}),
		redisotel.WithCommandsFilter(func([]redis.Cmder) bool { return true }))
}

// submit runs cmd through the autopipeliner, in a client span when the
// caller is traced.
func (r *Redis) submit(ctx context.Context, cmd redis.Cmder) error {
	if !r.tracing {
		return r.ap.Submit(ctx, cmd).WaitContext(ctx)
	}
	r.piped.Store(cmd, struct{}{})
	defer r.piped.Delete(cmd)
	if !trace.SpanFromContext(ctx).IsRecording() {
		return r.ap.Submit(ctx, cmd).WaitContext(ctx)
	}
	ctx, span := r.tracer.Start(ctx, cmd.Name(), trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("db.system", "redis"), attribute.String("db.operation.name", cmd.Name())))
	defer span.End()
	err := r.ap.Submit(ctx, cmd).WaitContext(ctx)
	if err != nil && !errors.Is(err, redis.Nil) {
		span.RecordError(err)
		span.SetStatus(codes.Error, "redis error")
	}
	return err
}
