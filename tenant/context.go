package tenant

import "context"

type ctxKey int

const (
	siteKey ctxKey = iota
	requestIDKey
	clientIPKey
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
