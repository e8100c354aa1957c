// Package bearer verifies Lectern access tokens for every resource server
// (the member API, MCP, the admin API and the authorization server's own
// userinfo endpoint), keeps the revocation state they consult, and writes the
// RFC 6750 / RFC 9728 WWW-Authenticate answers (401 invalid_token with
// resource_metadata, 403 insufficient_scope with scope).
//
// Access tokens are RFC 9068 JWTs signed ES256 by the site's key ring (see
// Claims). Verification checks the signature (kid → the site's published
// keys), typ at+jwt, iss = the site's issuer, aud = the site's resource,
// exp/iat with the usual skew, and then asks the cache whether the token's
// jti or its grant was revoked. Revocation is decided in the database and
// copied to the cache for speed (DESIGN §4): one hash per site, complete up
// to a per-site revocation version the database keeps. A hash that is gone
// or behind the version this replica knows (its own revocations, a poll of
// the sites it serves: Run) is refilled before an absent entry is
// believed; while the cache is down, copies in memory answer.
//
// bearer imports tenant, storage and authserver/keys (for keys.ErrUnknownKey);
// never authserver, a handler package, gorm or go-redis. memberapi, mcp and
// adminapi import it.
package bearer
