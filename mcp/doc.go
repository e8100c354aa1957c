// Package mcp is each site's MCP server at /mcp (Streamable HTTP, stateless),
// with anonymous catalog tools and member and operator tools behind a bearer
// token. It imports the go-sdk as gomcp.
//
// Handler is an http.Handler. Per request it checks the Origin header (DNS
// rebinding), authenticates the bearer token (no Authorization header:
// anonymous; anything else that is not a valid token of the site: 401),
// computes the caller's tool set from the token's scopes and the person's
// current roles at the site, answers a tools/call of a tool outside that set
// with the HTTP challenge MCP clients act on (401 with scope, or 403
// insufficient_scope), and hands the request to the go-sdk's stateless
// StreamableHTTPHandler with the server of (site, tool set). Servers are
// built once and cached: tools/list shows exactly the caller's tools, and a
// tool outside the set does not exist on the caller's server. Tool names
// and the scopes they need are in registry.go (DESIGN §10).
//
// Tool handlers find the site and the caller in the request context; every
// member read is keyed by the site and the token's subject.
//
// It imports authserver/bearer and authserver/scope, never authserver itself
// nor another handler package; vocab for the endpoint paths and price
// formatting; storage for record types; never echo, gorm or go-redis.
package mcp
