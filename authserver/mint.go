package authserver

import (
	"context"
	"crypto/sha256"
	"errors"
	"time"

	json "github.com/segmentio/encoding/json"

	"github.com/lectern/lectern/authserver/bearer"
	"github.com/lectern/lectern/authserver/keys"
	"github.com/lectern/lectern/authserver/scope"
	"github.com/lectern/lectern/tenant"
)

// tokenResponse is the token endpoint's answer (RFC 6749 §5.1).
type tokenResponse struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int64  `json:"expires_in"`
	RefreshToken string `json:"refresh_token,omitempty"`
	Scope        string `json:"scope"`
	IDToken      string `json:"id_token,omitempty"`
}

// idTokenClaims are the id_token's claims (DESIGN §4, OIDC Core §2).
type idTokenClaims struct {
	Issuer   string `json:"iss"`
	Audience string `json:"aud"`
	Expiry   int64  `json:"exp"`
	IssuedAt int64  `json:"iat"`
	Nonce    string `json:"nonce,omitempty"`
	AuthTime int64  `json:"auth_time"`
	// AMR are the methods the person signed in with (RFC 8176).
	AMR []string `json:"amr,omitempty"`
	UserClaims
}

// signingKey returns the site's signing key, logging a corrupt key with
// site and kid (the answer is 503 for that site only).
func (s *Server) signingKey(ctx context.Context, site *tenant.Site) (*keys.SigningKey, error) {
	k, err := s.keys.SigningKey(ctx, site.ID)
	if err != nil {
		var ce *keys.CorruptKeyError
		if errors.As(err, &ce) {
			s.logger.ErrorContext(ctx, "signing key unusable", "site_id", ce.Site, "kid", ce.KID, "err", ce.Err)
		} else {
			s.logger.ErrorContext(ctx, "signing key unavailable", "err", err)
		}
		return nil, errUnavailable(unavailableText)
	}
	return k, nil
}

// accessToken mints an RFC 9068 access token.
func accessToken(k *keys.SigningKey, c *bearer.Claims) (string, error) {
	payload, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	return k.Sign(payload, bearer.TokenType)
}

// tokens mints the access token (and, when asked, the id_token) of a grant.
func (s *Server) tokens(ctx context.Context, site *tenant.Site, g grantView, scopes []string, idToken *idTokenClaims, now time.Time) (*tokenResponse, error) {
	k, err := s.signingKey(ctx, site)
	if err != nil {
		return nil, err
	}
	at, err := accessToken(k, &bearer.Claims{
		Issuer: site.Issuer(), Subject: g.userID, Audience: g.resource, ClientID: g.clientID,
		Scope: scope.Join(scopes), JTI: randomID(), IssuedAt: now.Unix(),
		Expiry: now.Add(AccessTokenLifetime).Unix(), GrantID: g.id, AuthTime: g.authTime,
	})
	if err != nil {
		return nil, err
	}
	resp := &tokenResponse{AccessToken: at, TokenType: "Bearer", ExpiresIn: int64(AccessTokenLifetime / time.Second), Scope: scope.Join(scopes)}
	if idToken != nil {
		payload, err := json.Marshal(idToken)
		if err != nil {
			return nil, err
		}
		if resp.IDToken, err = k.Sign(payload, "JWT"); err != nil {
			return nil, err
		}
	}
	return resp, nil
}

// grantView is what minting needs to know of a grant.
type grantView struct {
	id, clientID, userID, resource string
	authTime                       int64
}

// hashToken is how refresh tokens are stored (DESIGN §4).
func hashToken(t string) []byte {
	sum := sha256.Sum256([]byte(t))
	return sum[:]
}

func timeUnix(sec int64) time.Time { return time.Unix(sec, 0).UTC() }
