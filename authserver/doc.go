// Package authserver is each site's OAuth 2.0 / OpenID Connect authorization
// server: /oauth/authorize with sign-in and consent pages, the token endpoint
// (authorization_code with PKCE S256, refresh_token with rotation and reuse
// detection), userinfo, revocation (RFC 7009) and introspection (RFC 7662),
// with RFC 9068 access tokens and ES256 id_tokens from the site's key ring.
//
// The token, revocation and introspection endpoints are served through
// zitadel/oidc's op.RegisterServer with this package's op.Server; the
// authorize endpoint is our own handler, because its error rules (an error
// page for an untrusted client or redirect URI, a redirect with iss per RFC
// 9207 otherwise, invalid_scope and invalid_target instead of silently
// dropping scopes) do not fit op's authorize pipeline. Userinfo is a resource
// endpoint and uses authserver/bearer like every other one.
//
// Every request uses its own site (tenant.FromContext): issuer, keys,
// clients, sessions and codes are per site. authserver imports tenant,
// storage, the leaves vocab (paths), ui (pages) and session (browser
// sessions, CSRF), and its own sub-packages; never another handler package
// (discovery, web, memberapi, mcp, adminapi), gorm or go-redis.
package authserver
