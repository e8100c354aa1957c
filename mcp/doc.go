// Package mcp is each site's MCP server at /mcp (Streamable HTTP, stateless),
// with anonymous catalog tools and member and operator tools behind a bearer
// token. It imports the go-sdk as gomcp.
//
// It imports authserver/bearer and authserver/scope, never authserver itself.
package mcp
