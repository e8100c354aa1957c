// Package discovery serves each site's machine-readable self-description:
// the protected-resource metadata (RFC 9728), the authorization-server
// metadata (RFC 8414, the source of truth), the OpenID Connect discovery
// document, the JWKS, and (later) /auth.md, /llms.txt and /pricing.md.
//
// Every document is generated from the resolved tenant.Site, never from the
// Host header. The endpoint paths it advertises come from package vocab,
// where the router finds them too, so the metadata and the routes cannot
// disagree.
//
// discovery imports tenant, storage, vocab and authserver/scope; never
// another handler package (authserver, mcp, web ...), echo, gorm or
// go-redis.
package discovery
