package server

import (
	"net/http"
	"net/netip"

	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"

	"github.com/lectern/lectern/internal/telemetry"
	"github.com/lectern/lectern/tenant"
)

// tracedHandler puts a server span around every request but the process
// endpoints (probes and scrapes would drown the traces). A trace context
// propagated by a trusted proxy (W3C traceparent; proxies) is continued;
// anyone else's starts a new root span linked to it, so that a client can
// neither file its requests under another trace nor choose whether they
// are sampled. With tracing off (no provider given, none installed from
// the OTEL_* variables) it returns h: otelhttp would only wrap every
// request and response in non-recording spans and writers (6% of the
// server's CPU in a refresh profile).
func tracedHandler(h http.Handler, tp trace.TracerProvider, proxies []netip.Prefix) http.Handler {
	if tracingOff(tp) {
		return h
	}
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	return otelhttp.NewHandler(h, "http.server",
		otelhttp.WithTracerProvider(tp),
		otelhttp.WithPropagators(otel.GetTextMapPropagator()),
		otelhttp.WithFilter(func(r *http.Request) bool { return !processPaths[r.URL.Path] }),
		otelhttp.WithPublicEndpointFn(func(r *http.Request) bool { return !tenant.TrustedPeer(r, proxies) }),
		// Request metrics come from the Prometheus middleware.
		otelhttp.WithMeterProvider(noop.NewMeterProvider()),
	)
}

// tracingOff reports whether no span would be recorded: no provider given
// (cfg.TracerProvider) and none installed from the OTEL_* variables. The
// router's otelhttp wrapper and the Redis client's redisotel hook are then
// left out.
func tracingOff(tp trace.TracerProvider) bool {
	return tp == nil && !telemetry.Installed()
}

// traceRoute names the request's span after its route (never the raw
// path, which holds ids) and adds the site, once routing and the Host
// middleware have run.
func traceRoute(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		span := trace.SpanFromContext(c.Request().Context())
		if span.IsRecording() {
			route := c.Path()
			if route == "" {
				route = "unmatched"
			}
			span.SetName(methodLabel(c.Request().Method) + " " + route)
			span.SetAttributes(attribute.String("http.route", route))
			if site, ok := tenant.FromContext(c.Request().Context()); ok {
				span.SetAttributes(telemetry.SiteAttribute(site.ID))
			}
		}
		return next(c)
	}
}
