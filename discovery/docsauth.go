package discovery

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/lectern/lectern/authserver/scope"
	"github.com/lectern/lectern/limits"
	"github.com/lectern/lectern/tenant"
	"github.com/lectern/lectern/vocab"
)

// PKCEExampleVerifier is the code_verifier of RFC 7636 Appendix B, the
// worked example /auth.md shows; its challenge is computed, never typed.
const PKCEExampleVerifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"

// exampleRedirect is the loopback redirect URI the walkthrough uses.
const exampleRedirect = "http://127.0.0.1:8976/callback"

// S256Challenge is the PKCE S256 code_challenge of verifier (RFC 7636 §4.2):
// BASE64URL(SHA256(ASCII(verifier))), without padding.
func S256Challenge(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// authMarkdown renders /auth.md. Every URL comes from the same builders as
// the metadata documents (AuthorizationServer, ProtectedResource), so the
// walkthrough cannot disagree with them.
func authMarkdown(site *tenant.Site, tools []vocab.MCPTool, lim *limits.Config) []byte {
	as := AuthorizationServer(site)
	pr := ProtectedResource(site)
	name := mdText(site.Name)
	var b doc

	b.line("# Signing in to ", name, ": OAuth 2.0 for apps and agents")
	b.line()
	b.line(name, " (", site.Origin, ") is its own OAuth 2.0 authorization server and protected resource. ",
		"This walkthrough covers the one supported flow, the Authorization Code flow with PKCE (S256), ",
		"with this site's real URLs: discover, register, authorize, exchange the code, use the token, refresh, revoke. ",
		"The authorization-server metadata is the source of truth; every URL on this page is taken from it.")
	b.line()

	b.line("## Endpoints")
	b.line()
	rows := [][]string{
		{"Issuer", as.Issuer},
		{"Protected-resource metadata (RFC 9728)", site.URL(vocab.ProtectedResourcePath)},
		{"Authorization-server metadata (RFC 8414)", site.URL(vocab.AuthorizationServerPath)},
		{"OpenID Connect discovery", site.URL(vocab.OpenIDConfigurationPath)},
		{"Authorization endpoint", as.AuthorizationEndpoint},
		{"Token endpoint", as.TokenEndpoint},
		{"UserInfo endpoint", as.UserInfoEndpoint},
		{"Revocation endpoint (RFC 7009)", as.RevocationEndpoint},
		{"Introspection endpoint (RFC 7662, confidential clients)", as.IntrospectionEndpoint},
		{"Registration endpoint", as.RegistrationEndpoint},
	}
	if as.JWKSURI != "" {
		rows = append(rows, []string{"JWKS (id_token keys)", as.JWKSURI})
	}
	rows = append(rows,
		[]string{"Member API (GraphQL over HTTP POST)", site.URL(vocab.MemberGraphQLPath)},
		[]string{"MCP server (Streamable HTTP)", site.URL(vocab.MCPPath)},
	)
	b.table([]string{"What", "URL"}, rows...)
	b.line()

	// 1. Discover
	b.line("## 1. Discover")
	b.line()
	b.line("Start from a protected URL. Without a token, ", site.URL(vocab.MemberGraphQLPath), " answers `401` with a pointer to the protected-resource metadata:")
	b.line()
	b.line("```http")
	b.line("HTTP/1.1 401 Unauthorized")
	b.line(`WWW-Authenticate: Bearer resource_metadata="`, site.URL(vocab.ProtectedResourcePath), `", error="invalid_token", error_description="no bearer token"`)
	b.line("```")
	b.line()
	b.line(site.URL(vocab.MCPPath), " serves its public catalog tools without a token; calling one of its member tools without a token answers the same `401`, with `scope=\"", scope.AccountRead, "\"` added.")
	b.line()
	b.line("```sh")
	b.line("curl -s ", site.URL(vocab.ProtectedResourcePath))
	b.line("```")
	b.line()
	b.line("```json")
	b.line(indentJSON(pr))
	b.line("```")
	b.line()
	b.line("`resource` is the value to send as the `resource` parameter (RFC 8707) at the authorization and token endpoints. ",
		"Then read the metadata of the authorization server named in `authorization_servers`:")
	b.line()
	b.line("```sh")
	b.line("curl -s ", site.URL(vocab.AuthorizationServerPath))
	b.line("```")
	b.line()
	b.line("What this site advertises there:")
	b.line()
	b.line("- `code_challenge_methods_supported`: ", codeList(as.CodeChallengeMethodsSupported), " (PKCE is required)")
	b.line("- `grant_types_supported`: ", codeList(as.GrantTypesSupported))
	b.line("- `response_types_supported`: ", codeList(as.ResponseTypesSupported))
	b.line("- `token_endpoint_auth_methods_supported`: ", codeList(as.TokenEndpointAuthMethodsSupported), " (public clients use `none`, confidential clients `client_secret_post`)")
	b.line("- `registration_endpoint`: ", as.RegistrationEndpoint)
	b.line(fmt.Sprintf("- `client_id_metadata_document_supported`: `%t`", as.ClientIDMetadataDocumentSupported))
	b.line(fmt.Sprintf("- `authorization_response_iss_parameter_supported`: `%t` (RFC 9207)", as.AuthorizationResponseISSParameterSupported))
	if as.JWKSURI != "" {
		b.line("- `id_token_signing_alg_values_supported`: ", codeList(as.IDTokenSigningAlgValuesSupported), " and `jwks_uri`: ", as.JWKSURI)
	} else {
		b.line("- no `id_token_signing_alg_values_supported` and no `jwks_uri`: this site issues no id_token; use the UserInfo endpoint")
	}
	b.line()

	// 2. Register
	b.line("## 2. Register")
	b.line()
	if site.Variant == tenant.VariantOpen {
		registerOpen(&b, as)
	} else {
		registerVendor(&b, site, as)
	}

	// 3. Authorize
	challenge := S256Challenge(PKCEExampleVerifier)
	memberScopes := scope.Join(scope.MemberDefault())
	b.line("## 3. Authorize")
	b.line()
	b.line("Create a PKCE pair for every authorization: a `code_verifier` of 43 to 128 characters from `A-Z a-z 0-9 - . _ ~`, ",
		"and its `code_challenge` = BASE64URL(SHA-256(code_verifier)) without padding. Only `S256` is accepted. A worked pair (RFC 7636 Appendix B; never reuse it):")
	b.line()
	b.line("```text")
	b.line("code_verifier  = ", PKCEExampleVerifier)
	b.line("code_challenge = ", challenge)
	b.line("```")
	b.line()
	b.line("Send the person's browser to the authorization endpoint:")
	b.line()
	b.line("```text")
	b.line(authorizeURL(as.AuthorizationEndpoint, memberScopes, pr.Resource, challenge))
	b.line("```")
	b.line()
	b.table([]string{"Parameter", "Value"},
		[]string{"`response_type`", "`code`"},
		[]string{"`client_id`", "your client_id (step 2), or the URL of your Client ID Metadata Document"},
		[]string{"`redirect_uri`", "exactly as registered; loopback redirect URIs match on any port"},
		[]string{"`scope`", "space-separated, URL-encoded as `%20`: `" + memberScopes + "` for a member's own data, or operator scopes such as `openid courses:read students:read`"},
		[]string{"`resource`", "`" + pr.Resource + "` (RFC 8707; required for member tokens, exactly the protected-resource metadata's `resource`)"},
		[]string{"`code_challenge`, `code_challenge_method`", "the S256 challenge, `S256`"},
		[]string{"`state`", "a fresh random value; check it on return"},
		[]string{"`nonce`", "a fresh random value when you will verify an id_token"},
	)
	b.line()
	b.line("The person signs in, sees what you ask for on a consent page, and approves. The browser then returns to your redirect URI:")
	b.line()
	b.line("```text")
	b.line(exampleRedirect, "?code=AUTHORIZATION_CODE&state=STATE&iss=", url.QueryEscape(as.Issuer))
	b.line("```")
	b.line()
	b.line("Check that `state` is yours and that `iss` equals `", as.Issuer, "` (RFC 9207). ",
		"Refusals come back the same way with `error` and `error_description` (`access_denied`, `invalid_scope`, `invalid_target` for a missing or wrong `resource`, ...).")
	b.line()

	// 4. Exchange
	b.line("## 4. Exchange the code")
	b.line()
	b.line("The code is valid for 60 seconds and only once.")
	b.line()
	b.line("```sh")
	b.line("curl -s -X POST ", as.TokenEndpoint, ` \`)
	b.line(`  -d grant_type=authorization_code \`)
	b.line(`  -d code=AUTHORIZATION_CODE \`)
	b.line(`  --data-urlencode redirect_uri=`, exampleRedirect, ` \`)
	b.line(`  -d client_id=YOUR_CLIENT_ID \`)
	b.line(`  -d code_verifier=`, PKCEExampleVerifier, ` \`)
	b.line(`  --data-urlencode resource=`, pr.Resource)
	b.line("```")
	b.line()
	b.line("Confidential clients add `client_secret` in the form (`client_secret_post`); HTTP Basic authentication is refused. The answer:")
	b.line()
	b.line("```json")
	if as.JWKSURI != "" {
		b.line(`{"access_token": "eyJ...", "token_type": "Bearer", "expires_in": 3600, "refresh_token": "...", "scope": "`, memberScopes, `", "id_token": "eyJ..."}`)
	} else {
		b.line(`{"access_token": "eyJ...", "token_type": "Bearer", "expires_in": 3600, "refresh_token": "...", "scope": "`, memberScopes, `"}`)
	}
	b.line("```")
	b.line()
	b.line("The access token is a JWT (RFC 9068) valid for one hour, bound to this origin: its `aud` is `", pr.Resource, "`.")
	if as.JWKSURI != "" {
		b.line("With scope `openid` the answer also carries an `id_token` signed with ES256. Verify it before relying on it: ",
			"the signature against the key named by its `kid` at ", as.JWKSURI, "; `iss` equals `", as.Issuer,
			"`; `aud` equals your client_id; `exp` is in the future (it lives 10 minutes); `nonce` equals the value you sent.")
	} else {
		b.line("This site issues no id_token; read the person's claims from ", as.UserInfoEndpoint, ".")
	}
	b.line()

	// 5. Use
	b.line("## 5. Use the access token")
	b.line()
	b.line("Send it in the `Authorization: Bearer` header, never in a query string. The same token works at the member API and at the MCP server of this site, ",
		"and at no other site: a token issued for another origin is refused with `401 invalid_token`.")
	b.line()
	b.line("### Member API (GraphQL)")
	b.line()
	b.line("```sh")
	b.line("curl -s -X POST ", site.URL(vocab.MemberGraphQLPath), ` \`)
	b.line(`  -H "Authorization: Bearer $ACCESS_TOKEN" \`)
	b.line(`  -H "Content-Type: application/json" \`)
	b.line(`  -d '{"query": "{ viewer { name email enrolledCourses(first: 5) { nodes { slug expireDate hasLifetimeAccess lastWatchedLecture { lectureId positionSeconds } } } } unreadNotificationCount }"}'`)
	b.line("```")
	b.line()
	b.line("It needs scope `", scope.AccountRead, "`; the mutations `markNotificationRead`, `markAllNotificationsRead` and `updateNotificationSubscription` need `", scope.AccountWrite, "`.")
	b.line()
	b.line("### MCP server")
	b.line()
	b.line("Point any MCP client at ", site.URL(vocab.MCPPath), " (Streamable HTTP, stateless: no session to keep). ",
		"Without a token it lists the public catalog tools; with a token it also lists the tools your scopes allow:")
	b.line()
	tableOf(&b, []string{"Tool", "Needs"}, tools, func(t *vocab.MCPTool) []string {
		need := "nothing (public)"
		if len(t.Scopes) > 0 {
			need = codeList(t.Scopes)
		}
		return []string{"`" + t.Name + "`", need}
	})
	b.line()
	b.line("A tool your token does not allow is not listed. Calling it anyway answers `401 invalid_token` without a token, ",
		"or `403 insufficient_scope` with the token, each with a `WWW-Authenticate` header naming the `scope` it needs and the `resource_metadata` URL: ",
		"authorize again with the scopes you hold plus the named ones (step-up). Browsers may call it from this origin only; requests with another `Origin` are refused with `403`.")
	b.line()
	b.line("One JSON-RPC request without an MCP client:")
	b.line()
	b.line("```sh")
	b.line("curl -s -X POST ", site.URL(vocab.MCPPath), ` \`)
	b.line(`  -H "Authorization: Bearer $ACCESS_TOKEN" \`)
	b.line(`  -H "Content-Type: application/json" \`)
	b.line(`  -H "Accept: application/json, text/event-stream" \`)
	b.line(`  -H "MCP-Protocol-Version: 2025-11-25" \`)
	b.line(`  -d '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "my_enrollments", "arguments": {"limit": 5}}}'`)
	b.line("```")
	b.line()

	// 6. Refresh
	b.line("## 6. Refresh")
	b.line()
	b.line("```sh")
	b.line("curl -s -X POST ", as.TokenEndpoint, ` \`)
	b.line(`  -d grant_type=refresh_token \`)
	b.line(`  -d refresh_token=$REFRESH_TOKEN \`)
	b.line(`  -d client_id=YOUR_CLIENT_ID`)
	b.line("```")
	b.line()
	b.line("Refresh tokens rotate: every refresh returns a new refresh token and retires the one you sent, so store the new one before using the access token. ",
		"Presenting a retired refresh token again is treated as theft and revokes the whole grant, every token of it included. ",
		"A refresh token lives 30 days from issue and a grant at most 90 days. A refresh may narrow `scope` but never widen it; ",
		"`resource`, if sent, must be the grant's. Refresh answers carry no id_token.")
	b.line()

	// 7. Revoke
	b.line("## 7. Revoke")
	b.line()
	b.line("```sh")
	b.line("curl -s -X POST ", as.RevocationEndpoint, ` \`)
	b.line(`  -d token=$REFRESH_TOKEN \`)
	b.line(`  -d client_id=YOUR_CLIENT_ID`)
	b.line("```")
	b.line()
	b.line("The answer is `200` with an empty body, also for unknown or already revoked tokens (RFC 7009). ",
		"Revoking a refresh token ends its grant and every access token of it; revoking an access token ends that token only.")
	b.line()

	limitsSection(&b, site, lim)

	// Not supported
	b.line("## Not supported")
	b.line()
	b.line("- The `agent_auth` extension: no autonomous `identity_assertion` via ID-JAG, no `service_auth`, no anonymous claim ceremony. There is no claim step; do not send an ID-JAG assertion.")
	b.line("- Grant types other than ", codeList(as.GrantTypesSupported), ": jwt-bearer, token-exchange, client_credentials, password and device code are `unsupported_grant_type`.")
	b.line("- PKCE `plain`, the implicit flow, response types other than `code`.")
	b.line("- Client authentication by HTTP Basic or by client assertion.")
	b.line("- Access tokens in the query string or the form body.")
	b.line()

	// Scopes
	b.line("## Scopes")
	b.line()
	b.line("Every scope the authorization server knows (`scopes_supported`). Member clients may ask for `", scope.AccountRead, "`, `", scope.AccountWrite,
		"` and the identity scopes; operator clients for the operator scopes and the identity scopes, within what the person's role at this site allows.")
	b.line()
	tableOf(&b, []string{"Scope", "Grants"}, as.ScopesSupported, func(name *string) []string {
		s, _ := scope.Lookup(*name)
		return []string{"`" + *name + "`", mdText(s.Description)}
	})
	return b.Bytes()
}

func registerOpen(b *doc, as ServerMetadata) {
	b.line("This site offers open dynamic client registration (RFC 7591) to clients whose redirect URIs are loopback addresses: ",
		"`http://127.0.0.1:PORT/path`, `http://[::1]:PORT/path` or `http://localhost:PORT/path` (at authorization any port matches, RFC 8252 §7.3). ",
		"A fixed https callback is refused with `invalid_redirect_uri`.")
	b.line()
	registerCurl(b, as.RegistrationEndpoint, `{"client_name": "My agent", "application_type": "native", "redirect_uris": ["`+exampleRedirect+`"], "token_endpoint_auth_method": "none"}`)
	b.line()
	b.line("The answer (`201`) carries your `client_id`; a `client_secret_post` client also gets its `client_secret`, shown once. What the client may ask for follows the `scope` you register with:")
	b.line()
	b.line("- no `scope`, or identity and account scopes only: a member client, limited to `", scope.Join(scope.MemberDefault()), "` (what an MCP client needs for the member tools);")
	b.line("- any operator scope: an operator client, which only the site's operators can authorize;")
	b.line("- operator and account scopes together: `invalid_client_metadata`.")
	b.line()
	b.line("At most 10 registrations a minute per address; a registration never used within 24 hours is deleted. ",
		"Client ID Metadata Documents are accepted too, from any host: use the document's https URL as `client_id` and skip registration.")
	b.line()
}

func registerVendor(b *doc, site *tenant.Site, as ServerMetadata) {
	b.line("This site has no open dynamic registration. How you get a `client_id` depends on who you are.")
	b.line()
	b.line("**Vendor platforms** known to the hosting provider post their client metadata to the registration endpoint; ",
		"the server matches `client_name` against its known integrations and returns that platform's `client_id`. ",
		"An unknown `client_name` is refused with `invalid_client_metadata`.")
	b.line()
	registerCurl(b, as.RegistrationEndpoint, `{"client_name": "Your Platform", "redirect_uris": ["`+exampleRedirect+`"], "token_endpoint_auth_method": "none"}`)
	b.line()
	hosts := "hosts allowlisted by the hosting provider or by this site"
	if site.CIMDOpen {
		hosts = "any host"
	}
	b.line("**Other clients** (a CLI, a local agent, a hosted web client) publish a Client ID Metadata Document over https and use its URL as `client_id` ",
		"(`client_id_metadata_document_supported` is `true`). This site accepts documents from ", hosts, ". ",
		"The document's `client_id` must equal its URL, its `redirect_uris` must be under the document's host or loopback, and it must not carry a secret. ",
		"Such clients are operator clients; until their host is reviewed they may request identity scopes and `*:read` scopes only.")
	b.line()
	b.line("```json")
	b.line(`{"client_id": "https://agent.example.com/client.json", "client_name": "Example agent", "redirect_uris": ["`, exampleRedirect, `"], "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"], "token_endpoint_auth_method": "none"}`)
	b.line("```")
	b.line()
	b.line("**Member clients**, which act for a signed-in member with `", scope.AccountRead, "`, are created by an operator of this site in its admin area ",
		"(Developers, then OAuth applications, visible once the \"MCP connections\" beta feature is enabled). ",
		"The operator picks the scopes and gives you the `client_id`; anyone with a role at the site can then authorize it. There is no self-serve route.")
	if site.MCPConnections {
		b.line("MCP connections are enabled on this site.")
	} else {
		b.line("MCP connections are not enabled on this site yet, so no member clients exist here.")
	}
	b.line()
}

// registerCurl writes the example registration request posting body.
func registerCurl(b *doc, endpoint, body string) {
	b.line("```sh")
	b.line("curl -s -X POST ", endpoint, ` \`)
	b.line(`  -H "Content-Type: application/json" \`)
	b.line(`  -d '`, body, `'`)
	b.line("```")
}

// authorizeURL is the example authorization request, with scope encoded as
// %20 as the spec asks.
func authorizeURL(endpoint, scopes, resource, challenge string) string {
	q := func(s string) string { return strings.ReplaceAll(url.QueryEscape(s), "+", "%20") }
	return endpoint + "?response_type=code&client_id=YOUR_CLIENT_ID&redirect_uri=" + q(exampleRedirect) +
		"&scope=" + q(scopes) + "&resource=" + q(resource) + "&code_challenge=" + challenge +
		"&code_challenge_method=S256&state=STATE&nonce=NONCE"
}

func codeList(items []string) string {
	out := make([]string, len(items))
	for i, s := range items {
		out[i] = "`" + s + "`"
	}
	return strings.Join(slices.Clip(out), ", ")
}

func indentJSON(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return "{}"
	}
	return string(b)
}

// limitsSection states the limits a client meets at this site, with the
// site's values (its overrides included): what a client needs to pace
// itself rather than learn them from 429s. The fixed ones come from vocab,
// where the packages that apply them read them too.
func limitsSection(b *doc, site *tenant.Site, lim *limits.Config) {
	v := func(n limits.Name) string { return strconv.Itoa(lim.ForSite(site, n)) }
	b.line("## Limits")
	b.line()
	b.line("Beyond a rate limit the answer is `429` with `Retry-After` (seconds): wait that long, then retry. ",
		"Sign-in pages answer the same way, as a page. ",
		"A sign-in may also be answered `503` with `Retry-After` when the server's password checks are all busy (every site it serves shares them): retry after that time. ",
		"A request beyond a size limit is refused as the table says: send less, retrying does not help. ",
		"Limits per IP address count an IPv6 address by its /64.")
	b.line()
	b.table([]string{"What", "Limit at this site"},
		[]string{"Token requests (code exchange and refresh)", v(limits.TokenPerClient) + " per second per client"},
		[]string{"Token requests, all clients together", v(limits.TokenPerSite) + " per second (per server)"},
		[]string{"Client registrations", v(limits.RegisterPerIP) + " per minute per IP address at this site"},
		[]string{"Authorization requests that start a sign-in or fetch a Client ID Metadata Document not yet cached", v(limits.AuthorizePerIP) + " per minute per IP address (all sites together)"},
		[]string{"The same, from every address together", v(limits.AuthorizePerSite) + " per second"},
		[]string{"Sign-ins in progress (authorization requests waiting for sign-in or consent, each kept 15 minutes)", v(limits.PendingAuthorizations) + " at once"},
		[]string{"Authorization requests of a signed-in person that wait for consent or a new sign-in", strconv.Itoa(vocab.PendingPerPerson) + " at once per person, then " + strconv.Itoa(vocab.PendingPerPerson) + " per 15 minutes"},
		[]string{"Failed sign-ins for one account from one IP address", v(limits.LoginFailuresPerAccountIP) + " per 15 minutes, then that address is refused for that account until the 15 minutes end"},
		[]string{"Failed sign-ins from one IP address, any account", v(limits.LoginFailuresPerIP) + " per 15 minutes, then that address is refused"},
		[]string{"Failed sign-ins for one account from anywhere", v(limits.LoginFailuresPerAccount) + " per 15 minutes, then every address waits between attempts (1 minute, doubling, at most 15); never a lockout"},
		[]string{"Password checks (sign-ins)", v(limits.LoginChecksPerSite) + " per second (per server)"},
		[]string{"`state` and `nonce`", "512 bytes each (longer: `invalid_request`)"},
		[]string{"Request bodies", sizeText(vocab.MaxBodyBytes) + " (larger: `413`; registration metadata: 16 KiB, larger: `invalid_client_metadata`)"},
		[]string{"Member API", v(limits.GraphQLCostPerSite) + " cost units per second for the site (a query costs 1, plus 1 per connection, plus 1 per 50 nodes)"},
		[]string{"MCP requests", v(limits.MCPRequestsPerSite) + " per second for the site"},
		[]string{"MCP JSON-RPC batches", strconv.Itoa(vocab.MCPMaxBatch) + " messages at most (more: `400`, JSON-RPC error `-32600`); none from protocol version 2025-06-18 on"},
	)
	b.line()
}

// sizeText reads a byte count as people write it: "1 MiB", "16 KiB".
func sizeText(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.Itoa(n>>20) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.Itoa(n>>10) + " KiB"
	}
	return strconv.Itoa(n) + " bytes"
}
