package authserver

import (
	"context"
	"errors"
	"strings"

	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/lectern/lectern/storage"
)

// introspection is the RFC 7662 §2.2 answer. aud shows the RFC 8707
// binding of the token (spec §Authentication 7).
type introspection struct {
	Active    bool   `json:"active"`
	Scope     string `json:"scope,omitempty"`
	ClientID  string `json:"client_id,omitempty"`
	Subject   string `json:"sub,omitempty"`
	Audience  string `json:"aud,omitempty"`
	Issuer    string `json:"iss,omitempty"`
	Expiry    int64  `json:"exp,omitempty"`
	IssuedAt  int64  `json:"iat,omitempty"`
	TokenType string `json:"token_type,omitempty"`
	JTI       string `json:"jti,omitempty"`
}

// Introspect implements RFC 7662 for confidential clients of the site (the
// platform's own resource servers verify tokens in process). Anything not
// active — unknown, expired, revoked, another site's — is {"active":false}.
//
// Who may learn what (RFC 7662 §4: the server decides which tokens a caller
// may introspect): a client, about the tokens issued to itself; a client an
// operator marked as one of the site's resource servers, about every access
// token for the site (tokens are meant for resource servers; refresh tokens
// never are). Anything else is {"active":false}, indistinguishable from an
// unknown token, so that a client learns nothing about another's tokens,
// not even whether they are live.
func (o *opServer) Introspect(ctx context.Context, r *op.Request[op.IntrospectionRequest]) (*op.Response, error) {
	s, site := o.s, siteOf(ctx)
	cc := r.Data.ClientCredentials
	if cc.ClientAssertion != "" {
		return nil, errInvalidClient("client assertions are not supported")
	}
	// The stored clients only: a Client ID Metadata Document is never a
	// confidential client, so fetching one here could only make the
	// server fetch for a stranger.
	c, err := s.clientAdmitted(ctx, site, cc.ClientID, refuseFetch)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return nil, errInvalidClient("unknown client")
	case err != nil:
		return nil, errUnavailable(unavailableText)
	case c.Public() || !c.checkSecret(cc.ClientSecret):
		return nil, errInvalidClient("introspection needs a confidential client authenticated with client_secret_post: client_id and client_secret in the form body")
	}
	tok := r.Data.IntrospectionRequest.Token
	inactive := op.NewResponse(introspection{Active: false})
	if len(tok) > 4096 {
		return inactive, nil
	}
	if strings.Count(tok, ".") == 2 {
		t, err := s.verifier.Verify(ctx, site, tok)
		if err != nil || (t.ClientID != c.ClientID && !c.ResourceServer) {
			return inactive, nil
		}
		return op.NewResponse(introspection{
			Active: true, Scope: strings.Join(t.Scopes, " "), ClientID: t.ClientID, Subject: t.Subject,
			Audience: t.Audience, Issuer: site.Issuer(), Expiry: t.Expiry.Unix(), IssuedAt: t.IssuedAt.Unix(),
			TokenType: "Bearer", JTI: t.JTI,
		}), nil
	}
	rt, g, err := s.store.RefreshTokenByHash(ctx, site.ID, hashToken(tok))
	if err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return inactive, nil
		}
		return nil, errUnavailable(unavailableText)
	}
	now := s.now()
	if g.ClientID != c.ClientID || rt.UsedAt != nil || rt.RevokedAt != nil || !rt.ExpiresAt.After(now) || g.RevokedAt != nil || !g.ExpiresAt.After(now) {
		return inactive, nil
	}
	return op.NewResponse(introspection{
		Active: true, Scope: strings.Join(g.Scopes, " "), ClientID: g.ClientID, Subject: g.UserID,
		Audience: g.Resource, Issuer: site.Issuer(), Expiry: rt.ExpiresAt.Unix(), IssuedAt: rt.CreatedAt.Unix(),
		TokenType: "refresh_token",
	}), nil
}
