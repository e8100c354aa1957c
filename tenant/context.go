package tenant

import (
	"context"
	"sync/atomic"
)

type ctxKey int

const (
	siteKey ctxKey = iota
	requestIDKey
	clientIPKey
	outcomeKey
)

// WithSite returns a copy of ctx that carries site.
func WithSite(ctx context.Context, site *Site) context.Context {
	return context.WithValue(ctx, siteKey, site)
}

// FromContext returns the site of the request, if the middleware resolved one.
func FromContext(ctx context.Context) (*Site, bool) {
	s, ok := ctx.Value(siteKey).(*Site)
	return s, ok && s != nil
}

// WithRequestID returns a copy of ctx that carries the request id.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey, id)
}

// RequestID returns the request id carried by ctx, or "".
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey).(string)
	return id
}

// WithOutcome returns a copy of ctx in which the handlers of its request
// can note how it ended (Shed), for the access log that installed it.
func WithOutcome(ctx context.Context) context.Context {
	return context.WithValue(ctx, outcomeKey, new(atomic.Bool))
}

// Shed notes that the request of ctx was refused by design to shed load
// (the password gate's 503 with Retry-After): an answer expected under
// load, which the access log records as a warning rather than as the
// error a 5xx otherwise is. Without WithOutcome it does nothing.
func Shed(ctx context.Context) {
	if b, ok := ctx.Value(outcomeKey).(*atomic.Bool); ok {
		b.Store(true)
	}
}

// WasShed reports whether Shed was called for the request of ctx.
func WasShed(ctx context.Context) bool {
	b, ok := ctx.Value(outcomeKey).(*atomic.Bool)
	return ok && b.Load()
}
