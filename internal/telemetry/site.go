package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/lectern/lectern/tenant"
)

// SiteIDKey is the attribute naming the site a span worked for.
const SiteIDKey = attribute.Key("lectern.site_id")

// SiteAttribute is the lectern.site_id attribute of site.
func SiteAttribute(site tenant.ID) attribute.KeyValue { return SiteIDKey.Int64(int64(site)) }

// SiteProcessor puts lectern.site_id on every span started in a context
// that carries a site (tenant.FromContext): the database and Redis spans
// of a request, started by their libraries, get it without knowing of
// sites. The request's own span starts before the site is resolved; the
// router middleware sets it there.
type SiteProcessor struct{}

var _ sdktrace.SpanProcessor = SiteProcessor{}

// OnStart implements sdktrace.SpanProcessor.
func (SiteProcessor) OnStart(parent context.Context, s sdktrace.ReadWriteSpan) {
	if site, ok := tenant.FromContext(parent); ok {
		s.SetAttributes(SiteAttribute(site.ID))
	}
}

// OnEnd implements sdktrace.SpanProcessor.
func (SiteProcessor) OnEnd(sdktrace.ReadOnlySpan) {}

// Shutdown implements sdktrace.SpanProcessor.
func (SiteProcessor) Shutdown(context.Context) error { return nil }

// ForceFlush implements sdktrace.SpanProcessor.
func (SiteProcessor) ForceFlush(context.Context) error { return nil }
