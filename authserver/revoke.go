package authserver

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/lectern/lectern/authserver/bearer"
	"github.com/lectern/lectern/storage"
)

// Revocation implements RFC 7009. An access token is revoked alone (by
// jti); a refresh token revokes its whole grant, and with it every access
// token of the grant. Unknown, expired or already revoked tokens answer 200
// with an empty body too (RFC 7009 §2.2): a revocation request reveals
// nothing. A token of another client is refused (§2.1). When the token
// cannot be checked or the revocation not written, the answer is 503
// (§2.2.1), never a 200 that did not revoke.
func (o *opServer) Revocation(ctx context.Context, r *op.ClientRequest[oidc.RevocationRequest]) (*op.Response, error) {
	s, site, client := o.s, siteOf(ctx), r.Client.(*Client)
	tok := r.Data.Token
	if len(tok) > 4096 {
		return op.NewResponse(nil), nil
	}
	now := s.now()
	if strings.Count(tok, ".") == 2 { // a JWT: an access token of ours, perhaps
		claims, err := s.verifier.Verify(ctx, site, tok)
		var berr *bearer.Error
		switch {
		case errors.As(err, &berr) && berr.Status == http.StatusServiceUnavailable:
			// The token could not be checked (keys or revocation state
			// unreadable): a 200 would tell the client it is revoked.
			return nil, errUnavailable(unavailableText)
		case err != nil:
			return op.NewResponse(nil), nil // not ours, expired or already revoked
		}
		if claims.ClientID != client.ClientID {
			return nil, oauthError(codeUnauthorizedClient, "the token was not issued to this client")
		}
		if err := s.verifier.RevokeToken(ctx, site.ID, claims.JTI, claims.Expiry, now); err != nil {
			s.logger.ErrorContext(ctx, "revoke access token", "err", err)
			return nil, errUnavailable(unavailableText)
		}
		s.audit(ctx, site.ID, client.ClientID, "token.revoked", claims.JTI, nil, map[string]any{"grant": claims.GrantID, "user": claims.Subject})
		return op.NewResponse(nil), nil
	}
	_, g, err := s.store.RefreshTokenByHash(ctx, site.ID, hashToken(tok))
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return op.NewResponse(nil), nil
	case err != nil:
		return nil, errUnavailable(unavailableText)
	}
	if g.ClientID != client.ClientID {
		return nil, oauthError(codeUnauthorizedClient, "the token was not issued to this client")
	}
	if g.RevokedAt == nil {
		if err := s.verifier.RevokeGrant(ctx, site.ID, g.ID, now); err != nil {
			s.logger.ErrorContext(ctx, "revoke grant", "err", err)
			return nil, errUnavailable(unavailableText)
		}
		s.audit(ctx, site.ID, client.ClientID, "grant.revoked", g.ID, nil, map[string]any{"reason": "refresh token revoked by the client", "user": g.UserID})
	}
	return op.NewResponse(nil), nil
}
