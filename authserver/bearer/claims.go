package bearer

import (
	"strings"
	"time"
)

// TokenType is the JOSE typ of access tokens (RFC 9068 §2.1).
const TokenType = "at+jwt"

// Lifetimes of access tokens (DESIGN §10). Revocation copies in the cache
// live this long (plus skew): after that no token they concern is valid.
const AccessTokenLifetime = time.Hour

// DefaultSkew is the clock skew tolerated on exp and iat.
const DefaultSkew = 60 * time.Second

// Claims are the claims of a Lectern access token (RFC 9068 §2.2). The
// authorization server mints them; resource servers verify them.
type Claims struct {
	Issuer   string `json:"iss"`
	Subject  string `json:"sub"`
	Audience string `json:"aud"` // the RFC 8707 resource: the site origin
	ClientID string `json:"client_id"`
	Scope    string `json:"scope"`
	JTI      string `json:"jti"`
	IssuedAt int64  `json:"iat"`
	Expiry   int64  `json:"exp"`
	GrantID  string `json:"grant_id"`
	AuthTime int64  `json:"auth_time,omitempty"`
}

// Scopes splits the scope claim.
func (c *Claims) Scopes() []string { return strings.Fields(c.Scope) }
