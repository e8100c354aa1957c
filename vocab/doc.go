// Package vocab is the vocabulary every handler package shares: the
// endpoint paths of a site (the router mounts handlers at them, the metadata
// advertises them, pages and tools link to them), the path of a course's
// Markdown page, how a price and a sum of money read, how an error
// description reads (ErrorDescription: the wiring's and mcp's rewrites of
// library error texts), the MCP tool list that /auth.md prints, and the
// address of a person's picture at a site (the picture claim, and the
// avatars web serves), and the fixed limits a client meets, which the
// package applying each and /auth.md share.
//
// It is a leaf, as dex's server/reqctx is: it imports only the standard
// library, so authserver, discovery, mcp, web and the wiring can all use the
// same names without importing one another.
package vocab
