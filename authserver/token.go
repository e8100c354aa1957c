package authserver

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	httphelper "github.com/zitadel/oidc/v3/pkg/http"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/lectern/lectern/authserver/clientmeta"
	"github.com/lectern/lectern/authserver/scope"
	"github.com/lectern/lectern/limits"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// validVerifier checks the code_verifier syntax (RFC 7636 §4.1): 43-128
// characters of A-Z a-z 0-9 - . _ ~.
func validVerifier(v string) bool {
	if len(v) < 43 || len(v) > 128 {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~') {
			return false
		}
	}
	return true
}

// formBody checks the request of a form endpoint (token, revocation,
// introspection) before op reads it, and answers invalid_request when it
// fails: an application/x-www-form-urlencoded body that parses, nothing in
// the URL query (op would read parameters from both, the query's winning,
// and RFC 6749 §2.3.1 keeps credentials out of URLs), and no parameter
// twice but those in repeatable (RFC 6749 §3.1).
func formBody(w http.ResponseWriter, r *http.Request, endpoint string, repeatable ...string) bool {
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct != "application/x-www-form-urlencoded" {
		writeOAuthError(w, oauthError(codeInvalidRequest, "the "+endpoint+" endpoint takes an application/x-www-form-urlencoded body"))
		return false
	}
	if r.URL.RawQuery != "" {
		writeOAuthError(w, oauthError(codeInvalidRequest, "parameters go in the form body, not the URL"))
		return false
	}
	if err := r.ParseForm(); err != nil {
		if e, ok := tooLarge(err); ok {
			writeTooLarge(w, e)
			return false
		}
		writeOAuthError(w, oauthError(codeInvalidRequest, "the request body is not a valid form"))
		return false
	}
	for k, vs := range r.PostForm {
		if len(vs) > 1 && !slices.Contains(repeatable, k) {
			writeOAuthError(w, oauthError(codeInvalidRequest, "the "+k+" parameter is repeated"))
			return false
		}
	}
	return true
}

// Token is the token endpoint (POST /api/oauth/token). It refuses what op
// should never see — other content types, repeated parameters, grant types
// other than authorization_code and refresh_token (unsupported_grant_type:
// no jwt-bearer, token-exchange, client_credentials, password, device or
// ID-JAG) — applies the per-client rate limit, and hands the rest to op.
func (s *Server) Token(w http.ResponseWriter, r *http.Request) {
	w = clientChallenge(w, r)
	site := siteOf(r.Context())
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Pragma", "no-cache")
	// The site's budget first: a flood of token requests at one site is
	// refused before it parses a form or reaches the cache.
	if ok, retry := s.tokenBudget.Take(r.Context(), 1); !ok {
		writeOAuthError(w, errRateLimited("too many token requests at this site; slow down", retry))
		return
	}
	if !formBody(w, r, "token", "resource") {
		return
	}
	gt := r.PostForm.Get("grant_type")
	switch gt {
	case "authorization_code", "refresh_token":
	case "":
		writeOAuthError(w, oauthError(codeInvalidRequest, "grant_type is required"))
		return
	default:
		// Quoted and cut: the answer must not grow with the request.
		writeOAuthError(w, oauthError(codeUnsupportedGrantType, "grant_type "+strconv.Quote(clientmeta.Truncate(gt, 64))+" is not supported; use authorization_code or refresh_token"))
		return
	}
	if clientID := r.PostForm.Get("client_id"); clientID != "" {
		ok, retry, err := s.leased.Allow(r.Context(), storage.CacheKey(site.ID, "rl:token", hashHex(clientID)), s.rateOf(r.Context(), limits.TokenPerClient))
		if err != nil {
			s.logger.ErrorContext(r.Context(), "rate limit unavailable", "err", err)
			writeOAuthError(w, errUnavailable(unavailableText))
			return
		}
		if !ok {
			writeOAuthError(w, errRateLimited("too many token requests for this client; slow down", retry))
			return
		}
	} else if noClient(w, r) {
		return
	}
	if s.directToken(w, r, gt) {
		return
	}
	s.op.ServeHTTP(w, r)
}

// noClient answers a request of the token or revocation endpoint that
// names no client at all (no client_id, no Authorization header, no
// assertion, each of which VerifyClient answers itself) with
// invalid_request saying how clients identify themselves here, instead of
// op's "client_id or client_assertion must be provided", which points at
// assertions this server refuses. It reports whether it answered.
func noClient(w http.ResponseWriter, r *http.Request) bool {
	if r.Header.Get("Authorization") != "" || r.PostForm.Has("client_assertion") || r.PostForm.Has("client_assertion_type") {
		return false
	}
	writeOAuthError(w, oauthError(codeInvalidRequest, "client_id is required: a public client sends it alone, a confidential one with its client_secret (client_secret_post)"))
	return true
}

// directToken answers the common token request — client_id (and
// client_secret) in the form, no Authorization header, no assertion, no
// scope — the way op's token handler would, without its router, its two
// reflective form decodings and its spans: the same client verification,
// grant-type check, request checks ("code missing", "redirect_uri
// missing", "refresh_token missing"), the same handlers and the same error
// and JSON writers (op.WriteError, httphelper.MarshalJSON). It reports
// false, having written nothing, for every other request, which op serves.
// The token-endpoint tests run both paths (TestDirectTokenMatchesOp).
func (s *Server) directToken(w http.ResponseWriter, r *http.Request, gt string) bool {
	form := r.Form
	if s.opDirectOff.Load() || r.Header.Get("Authorization") != "" || form.Get("client_id") == "" ||
		form.Has("client_assertion") || form.Has("client_assertion_type") || form.Has("scope") {
		return false
	}
	ctx := r.Context()
	o := &opServer{s: s}
	cc := &op.ClientCredentials{ClientID: form.Get("client_id"), ClientSecret: form.Get("client_secret")}
	c, err := o.VerifyClient(ctx, &op.Request[op.ClientCredentials]{Method: r.Method, URL: r.URL, Header: r.Header, Form: form, Data: cc})
	if err != nil {
		op.WriteError(w, r, err, nil)
		return true
	}
	if !op.ValidateGrantType(c, oidc.GrantType(gt)) {
		op.WriteError(w, r, oidc.ErrUnauthorizedClient().WithDescription("grant_type %q not allowed", gt), nil)
		return true
	}
	var resp *op.Response
	switch gt {
	case "authorization_code":
		req := &oidc.AccessTokenRequest{Code: form.Get("code"), RedirectURI: form.Get("redirect_uri"), ClientID: cc.ClientID,
			ClientSecret: cc.ClientSecret, CodeVerifier: form.Get("code_verifier")}
		switch {
		case req.Code == "":
			err = oidc.ErrInvalidRequest().WithDescription("code missing")
		case req.RedirectURI == "":
			err = oidc.ErrInvalidRequest().WithDescription("redirect_uri missing")
		default:
			resp, err = o.CodeExchange(ctx, &op.ClientRequest[oidc.AccessTokenRequest]{
				Request: &op.Request[oidc.AccessTokenRequest]{Method: r.Method, URL: r.URL, Header: r.Header, Form: form, Data: req}, Client: c})
		}
	case "refresh_token":
		req := &oidc.RefreshTokenRequest{RefreshToken: form.Get("refresh_token"), ClientID: cc.ClientID, ClientSecret: cc.ClientSecret}
		if req.RefreshToken == "" {
			err = oidc.ErrInvalidRequest().WithDescription("refresh_token missing")
		} else {
			resp, err = o.RefreshToken(ctx, &op.ClientRequest[oidc.RefreshTokenRequest]{
				Request: &op.Request[oidc.RefreshTokenRequest]{Method: r.Method, URL: r.URL, Header: r.Header, Form: form, Data: req}, Client: c})
		}
	default:
		return false // not reached: Token admits only the two grants
	}
	if err != nil {
		op.WriteError(w, r, err, nil)
		return true
	}
	h := w.Header()
	for k, v := range resp.Header {
		h[k] = v
	}
	httphelper.MarshalJSON(w, resp.Data)
	return true
}

// opServer adapts the Server to op's Server interface.
type opServer struct {
	op.UnimplementedServer
	s *Server
}

var _ op.Server = (*opServer)(nil)

// VerifyClient authenticates the client (RFC 6749 §2.3): public clients by
// client_id alone ("none"), confidential ones with client_secret_post. Basic
// authentication and assertions are not advertised and are refused.
func (o *opServer) VerifyClient(ctx context.Context, r *op.Request[op.ClientCredentials]) (op.Client, error) {
	site := siteOf(ctx)
	cc := r.Data
	if cc.ClientAssertion != "" || cc.ClientAssertionType != "" {
		return nil, errInvalidClient("client assertions are not supported; use client_secret_post or none")
	}
	if _, _, ok := basicAuth(r.Header); ok {
		return nil, errInvalidClient("HTTP Basic client authentication is not supported; send client_id (and client_secret) in the form body")
	}
	c, err := o.s.client(ctx, site, cc.ClientID)
	if err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return nil, errInvalidClient("unknown client")
		}
		var ce *ClientError
		if errors.As(err, &ce) {
			return nil, errInvalidClient(ce.Description)
		}
		return nil, errUnavailable(unavailableText)
	}
	if c.Public() {
		if cc.ClientSecret != "" {
			return nil, errInvalidClient("this is a public client; it has no client_secret")
		}
		return c, nil
	}
	if cc.ClientSecret == "" {
		return nil, errInvalidClient("client_secret is required for this confidential client (client_secret_post)")
	}
	if !c.checkSecret(cc.ClientSecret) {
		return nil, errInvalidClient("client authentication failed")
	}
	return c, nil
}

func basicAuth(h http.Header) (string, string, bool) {
	r := http.Request{Header: h}
	return r.BasicAuth()
}

// CodeExchange implements the authorization_code grant (RFC 6749 §4.1.3,
// RFC 7636 §4.6, RFC 8707 §2.2). A code is single use; a replayed code
// revokes the grant its first use created (DESIGN §4).
func (o *opServer) CodeExchange(ctx context.Context, r *op.ClientRequest[oidc.AccessTokenRequest]) (*op.Response, error) {
	s, site, client := o.s, siteOf(ctx), r.Client.(*Client)
	req := r.Data
	if len(req.Code) != 43 {
		return nil, oauthError(codeInvalidGrant, "the authorization code is invalid or expired")
	}
	grantID := grantIDForCode(req.Code)
	rec, err := s.peekCode(ctx, site.ID, req.Code)
	switch {
	case errors.Is(err, errCodeUnknown):
		// Unknown, expired, or used before: if it created a grant, this
		// is a replay and that grant is revoked.
		return nil, s.codeReplayed(ctx, site, client, grantID)
	case err != nil:
		return nil, errUnavailable(unavailableText)
	}
	if err := checkCodeRequest(site, client, rec, req, r.Form["resource"]); err != nil {
		// A misused code is burnt, as a taken one would be: whoever sent
		// this request may not try again with it.
		s.forgetCode(ctx, site.ID, req.Code)
		return nil, err
	}
	now := s.now()
	refresh := randomToken()
	g := &storage.Grant{
		ID: grantID, SiteID: site.ID, ClientID: client.ClientID, UserID: rec.UserID, Scopes: rec.Scopes,
		Resource: rec.Resource, AuthTime: timeUnix(rec.AuthTime), CreatedAt: now, ExpiresAt: now.Add(GrantLifetime), LastUsedAt: now,
	}
	rt := &storage.RefreshToken{TokenHash: hashToken(refresh), CreatedAt: now, ExpiresAt: now.Add(RefreshTokenLifetime)}
	created := &storage.AuditEvent{SiteID: site.ID, Actor: rec.UserID, Action: "grant.created", Target: client.ClientID,
		IP: tenant.ClientIPFrom(ctx), Details: map[string]any{"grant": g.ID, "scopes": rec.Scopes}, CreatedAt: now}
	switch err := s.store.CreateGrant(ctx, g, rt, created); {
	case errors.Is(err, storage.ErrConflict):
		// The code's grant exists: it was redeemed already (its deletion
		// from the cache was lost, or the two raced). A replay like any
		// other: refused, and the grant it issued revoked.
		s.forgetCode(ctx, site.ID, req.Code)
		return nil, s.codeReplayed(ctx, site, client, grantID)
	case err != nil:
		// The code stays in the cache: the retry the 503 invites can
		// succeed within the code's lifetime.
		s.logger.ErrorContext(ctx, "create grant", "err", err)
		return nil, errUnavailable(unavailableText)
	}
	// The grant is in the database, so the code is spent whether or not
	// the cache forgets it: its deletion is cleanup, and the answer does
	// not wait for Redis to confirm it.
	go s.forgetCode(ctx, site.ID, req.Code)
	if client.SiteID != nil && (client.LastUsedAt == nil || now.Sub(*client.LastUsedAt) > 24*time.Hour) {
		// Used at last: not an abandoned registration (the purge spares it).
		if err := s.store.TouchClient(ctx, site.ID, client.ClientID, now); err == nil {
			s.clients.invalidate(site.ID, client.ClientID)
		}
	}
	var idt *idTokenClaims
	if site.IDTokens && slices.Contains(rec.Scopes, scope.OpenID) {
		idt = &idTokenClaims{
			Issuer: site.Issuer(), Audience: client.ClientID, IssuedAt: now.Unix(), Expiry: now.Add(IDTokenLifetime).Unix(),
			Nonce: rec.Nonce, AuthTime: rec.AuthTime, AMR: rec.AMR, UserClaims: userClaims(site, &rec.Profile, rec.Scopes),
		}
	}
	resp, err := s.tokens(ctx, site, grantView{g.ID, g.ClientID, g.UserID, g.Resource, rec.AuthTime}, rec.Scopes, idt, now)
	if err != nil {
		return nil, err
	}
	resp.RefreshToken = refresh
	return op.NewResponse(resp), nil
}

// codeReplayed answers a code presented after its redemption: the grant
// it issued (if any) is revoked, in the database, and the request refused.
func (s *Server) codeReplayed(ctx context.Context, site *tenant.Site, client *Client, grantID string) error {
	err := s.verifier.RevokeGrant(ctx, site.ID, grantID, s.now())
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return oauthError(codeInvalidGrant, "the authorization code is invalid or expired")
	case err != nil:
		s.logger.ErrorContext(ctx, "revoking a replayed code's grant failed", "grant", grantID, "err", err)
		return errUnavailable(unavailableText)
	}
	s.audit(ctx, site.ID, client.ClientID, "grant.revoked", grantID, nil, map[string]any{"reason": "authorization code replayed"})
	return oauthError(codeInvalidGrant, "the authorization code was already used; the tokens issued for it have been revoked")
}

// checkCodeRequest checks a code exchange against what the code was issued
// for: the client, the redirect URI, the PKCE verifier (RFC 7636 §4.6) and
// the resource (RFC 8707 §2.2).
func checkCodeRequest(site *tenant.Site, client *Client, rec *codeRecord, req *oidc.AccessTokenRequest, resources []string) error {
	if rec.ClientID != client.ClientID {
		return oauthError(codeInvalidGrant, "the authorization code was issued to another client")
	}
	if req.RedirectURI != rec.RedirectURI {
		return oauthError(codeInvalidGrant, "redirect_uri does not match the one of the authorization request")
	}
	if !validVerifier(req.CodeVerifier) {
		return oauthError(codeInvalidGrant, "code_verifier is missing or malformed (RFC 7636: 43-128 characters of A-Z a-z 0-9 - . _ ~)")
	}
	sum := sha256.Sum256([]byte(req.CodeVerifier))
	if subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(rec.Challenge)) != 1 {
		return oauthError(codeInvalidGrant, "PKCE verification failed: code_verifier does not match code_challenge")
	}
	return checkTokenResource(site, client, resources, rec.Resource)
}

// checkTokenResource applies RFC 8707 at the token endpoint: member tokens
// must repeat the resource of the authorization request; others may.
func checkTokenResource(site *tenant.Site, client *Client, given []string, authorized string) error {
	switch {
	case len(given) > 1:
		return oauthError(codeInvalidTarget, "more than one resource was requested; this server has one resource, "+site.Resource())
	case len(given) == 0 && client.Audience == storage.AudienceMember:
		return oauthError(codeInvalidTarget, "resource is required for member clients and must repeat the authorization request's value, "+site.Resource())
	case len(given) == 1 && canonicalResource(given[0]) != authorized:
		return oauthError(codeInvalidTarget, "resource must repeat the authorization request's value, "+authorized)
	}
	return nil
}

// RefreshToken implements the refresh_token grant (RFC 6749 §6) with
// rotation: every use returns a new refresh token, and presenting a rotated
// one revokes the whole grant (DESIGN §4). Refresh responses carry no
// id_token.
func (o *opServer) RefreshToken(ctx context.Context, r *op.ClientRequest[oidc.RefreshTokenRequest]) (*op.Response, error) {
	s, site, client := o.s, siteOf(ctx), r.Client.(*Client)
	old := r.Data.RefreshToken
	if len(old) > 512 {
		return nil, oauthError(codeInvalidGrant, "the refresh token is invalid")
	}
	// The scope is split as the authorization endpoint splits it
	// (scope.Parse: any white space), so "scope=" and a double space mean
	// what they mean there, not an empty scope name.
	requested := strings.Fields(strings.Join(r.Data.Scopes, " "))
	resources := r.Form["resource"]
	if len(requested) > 0 || len(resources) > 0 {
		// Check narrowing before rotating: a refused request must not burn
		// the token (its next use would look like a replay). Only for a
		// live token of this client: a used, revoked or expired token, or
		// another client's, goes on to the rotation, which revokes the
		// grant for a replay or a theft whatever else the request asks;
		// answering it here would skip that and tell the holder which
		// scopes the grant has.
		rt, g, err := s.store.RefreshTokenByHash(ctx, site.ID, hashToken(old))
		if err == nil && rt.UsedAt == nil && rt.RevokedAt == nil && g.RevokedAt == nil &&
			s.now().Before(rt.ExpiresAt) && g.ClientID == client.ClientID {
			if err := checkRefreshNarrowing(site, g, requested, resources); err != nil {
				return nil, err
			}
		}
	}
	now := s.now()
	next := randomToken()
	g, err := s.store.RotateRefreshToken(ctx, site.ID, hashToken(old),
		&storage.RefreshToken{TokenHash: hashToken(next), CreatedAt: now, ExpiresAt: now.Add(RefreshTokenLifetime)}, now)
	switch {
	case errors.Is(err, storage.ErrRefreshReused):
		if err := s.verifier.MarkGrantRevoked(ctx, site.ID, g.ID); err != nil {
			s.logger.ErrorContext(ctx, "revocation copy not written", "grant", g.ID, "err", err)
		}
		s.audit(ctx, site.ID, client.ClientID, "grant.revoked", g.ID, nil, map[string]any{"reason": "refresh token reused"})
		return nil, oauthError(codeInvalidGrant, "the refresh token was already used; the grant has been revoked")
	case errors.Is(err, storage.ErrNotFound):
		return nil, oauthError(codeInvalidGrant, "the refresh token is invalid, expired or revoked")
	case err != nil:
		s.logger.ErrorContext(ctx, "rotate refresh token", "err", err)
		return nil, errUnavailable(unavailableText)
	}
	if g.ClientID != client.ClientID {
		// Another client's token: treat it as stolen and revoke the grant.
		_ = s.verifier.RevokeGrant(ctx, site.ID, g.ID, now)
		s.audit(ctx, site.ID, client.ClientID, "grant.revoked", g.ID, nil, map[string]any{"reason": "refresh token presented by another client"})
		return nil, oauthError(codeInvalidGrant, "the refresh token was issued to another client")
	}
	scopes := g.Scopes
	if len(requested) > 0 {
		scopes = requested
	}
	resp, err := s.tokens(ctx, site, grantView{g.ID, g.ClientID, g.UserID, g.Resource, g.AuthTime.Unix()}, scopes, nil, now)
	if err != nil {
		return nil, err
	}
	resp.RefreshToken = next
	return op.NewResponse(resp), nil
}

func checkRefreshNarrowing(site *tenant.Site, g *storage.Grant, requested, resources []string) error {
	for _, sc := range requested {
		if !slices.Contains(g.Scopes, sc) {
			return oauthError(codeInvalidScope, sc+" was not granted; a refresh may only narrow the scopes")
		}
	}
	switch {
	case len(resources) > 1:
		return oauthError(codeInvalidTarget, "more than one resource was requested")
	case len(resources) == 1 && canonicalResource(resources[0]) != g.Resource:
		return oauthError(codeInvalidTarget, "resource must be the grant's resource, "+g.Resource)
	}
	_ = site
	return nil
}
