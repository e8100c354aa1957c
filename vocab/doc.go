// Package vocab is the vocabulary every handler package shares: the
// endpoint paths of a site (the router mounts handlers at them, the metadata
// advertises them, pages and tools link to them), the path of a course's
// Markdown page, how a price reads, and the MCP tool list that /auth.md
// prints.
//
// It is a leaf, as dex's server/reqctx is: it imports only the standard
// library, so authserver, discovery, mcp, web and the wiring can all use the
// same names without importing one another.
package vocab
