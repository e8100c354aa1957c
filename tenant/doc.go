// Package tenant is Lectern's shared vocabulary for multi-tenancy: the Site a
// request belongs to, the context helpers that carry it (and the request id),
// and the Host → Site resolver with its HTTP middleware.
//
// Every other package of ours may import tenant; tenant imports nothing of
// ours and only the standard library (DESIGN §2). It is the leaf that lets the
// authorization server, the resource servers, storage and the CLI agree on
// what a site is without an import cycle.
//
// The issuer, the RFC 8707 resource and every URL a site publishes come from
// the resolved Site, never from the raw Host header: an unknown host stops in
// the middleware with a 404 and reaches no handler. The middleware also keeps
// an https site on https: HSTS on every answer, no service over plain http.
package tenant
