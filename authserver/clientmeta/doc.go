// Package clientmeta holds the rules for OAuth client metadata (RFC 7591
// §2, DESIGN §6) that every way of getting a client shares: which redirect
// URIs each kind of client may register (open registration, clients an
// operator creates, Client ID Metadata Documents), how a redirect URI of an
// authorization request matches the registered ones (exact, but any port
// on loopback, RFC 8252 §7.3), client names, scopes and the audience they
// imply, and vendor-name matching. There is one copy of each rule so that
// registration, the admin API, the admin area and CIMD cannot drift apart.
//
// It is a leaf: it imports authserver/scope and the standard library,
// nothing else of ours (not storage, tenant or authserver), so that every
// one of those callers can use it.
package clientmeta
