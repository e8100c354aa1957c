// Package cimd fetches, validates and caches OAuth Client ID Metadata
// Documents (draft-ietf-oauth-client-id-metadata-document; MCP 2025-11-25
// "Client ID Metadata Documents"; DESIGN §6): a client whose client_id is an
// https URL publishes its metadata at that URL, and the authorization server
// fetches it instead of keeping a registration.
//
// Fetching a URL a stranger names is a server-side request forgery risk, so
// the Fetcher's HTTP client is deliberately narrow: https only, the host is
// resolved once and refused if any address is non-public, the connection
// goes to one of the vetted addresses (no second lookup, so no DNS
// rebinding), no redirects, no proxy, short timeouts and a size cap.
// Documents are public clients only: anything that implies a client secret
// or key-based client authentication is refused.
//
// Valid documents are cached platform-wide (site 0) in storage.Cache for
// their Cache-Control max-age, clamped to [5 minutes, 24 hours]; failures and
// invalid documents are not cached here (the caller keeps them briefly, per
// site: authserver's CIMDClients). Whether a document's host is allowed at a
// site (cimd_hosts, cimd_open), which scopes an unreviewed client may get,
// and who may make the server fetch at all (FetchAdmitted: the caller
// charges its rate limits before a fetch) are the caller's decisions, not
// this package's.
//
// cimd imports storage, tenant and authserver/clientmeta (the redirect-URI,
// host and name rules every client follows) of ours and nothing else; in
// particular not authserver, which imports it.
package cimd
