package bearer

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/lectern/lectern/tenant"
)

// maxTokenBytes bounds what is looked at: Lectern's access tokens are well
// under 1 KB, and nothing larger is parsed or hashed.
const maxTokenBytes = 8 << 10

// Descriptions of refusals; ASCII, no quotes (they go into WWW-Authenticate).
const (
	descMalformed = "the access token is malformed"
	descAlg       = "the access token is not signed with ES256"
	descType      = "the token is not an access token (typ must be at+jwt)"
	descSignature = "the access token signature is invalid"
	descIssuer    = "the access token was issued by another issuer"
	descAudience  = "the access token was issued for another resource"
	descExpired   = "the access token has expired"
	descFuture    = "the access token was issued in the future"
	descRevoked   = "the access token has been revoked"
)

// b64 decodes JWS segments: base64url without padding (RFC 7515 §2), and
// strict, so that one token has one encoding.
var b64 = base64.RawURLEncoding.Strict()

// header is the JOSE header of a Lectern access token.
type header struct {
	Alg  string          `json:"alg"`
	Typ  string          `json:"typ"`
	Kid  string          `json:"kid"`
	Crit json.RawMessage `json:"crit"`
}

// wireClaims reads Claims as RFC 9068 allows them to arrive: aud may be a
// string or an array of strings (RFC 7519 §4.1.3).
type wireClaims struct {
	Issuer   string   `json:"iss"`
	Subject  string   `json:"sub"`
	Audience audience `json:"aud"`
	ClientID string   `json:"client_id"`
	Scope    string   `json:"scope"`
	JTI      string   `json:"jti"`
	IssuedAt int64    `json:"iat"`
	Expiry   int64    `json:"exp"`
	GrantID  string   `json:"grant_id"`
	AuthTime int64    `json:"auth_time"`
}

type audience []string

func (a *audience) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '[' {
		var l []string
		if err := json.Unmarshal(b, &l); err != nil {
			return err
		}
		*a = l
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*a = audience{s}
	return nil
}

// verifyJWT checks raw as a JWS in compact serialization (RFC 7515 §7.1)
// signed ES256 by one of the site's published keys, with typ at+jwt, and
// its claims (RFC 9068 §4). The framing is parsed here rather than by a
// general JOSE library on purpose: exactly one algorithm, no embedded keys
// or certificate chains to parse before the signature is known to be good,
// and no JSON serialization or JWE to fall into.
func (v *Verifier) verifyJWT(ctx context.Context, site *tenant.Site, raw string, now time.Time) (*verified, error) {
	h64, rest, ok := strings.Cut(raw, ".")
	p64, s64, ok2 := strings.Cut(rest, ".")
	if !ok || !ok2 || strings.IndexByte(s64, '.') >= 0 || !isB64URL(h64) || !isB64URL(p64) || !isB64URL(s64) {
		// A JWE has five segments, and JSON serialization starts with '{'.
		return nil, InvalidToken(descMalformed)
	}
	hb, err := b64.DecodeString(h64)
	if err != nil {
		return nil, InvalidToken(descMalformed)
	}
	var hdr header
	if err := json.Unmarshal(hb, &hdr); err != nil {
		return nil, InvalidToken(descMalformed)
	}
	if hdr.Alg != "ES256" {
		// RFC 8725 §3.1: the algorithm is ours to choose, never the token's
		// (no "none", no HS256 keyed with a public key).
		return nil, InvalidToken(descAlg)
	}
	if len(hdr.Crit) > 0 {
		// RFC 7515 §4.1.11: we understand no extensions.
		return nil, InvalidToken(descMalformed)
	}
	// RFC 9068 §4: typ at+jwt (or application/at+jwt; media types compare
	// case-insensitively). It keeps an id_token, signed by the same key,
	// from passing as an access token (RFC 8725 §3.11).
	if !strings.EqualFold(hdr.Typ, TokenType) && !strings.EqualFold(hdr.Typ, "application/"+TokenType) {
		return nil, InvalidToken(descType)
	}
	if hdr.Kid == "" || len(hdr.Kid) > 256 {
		return nil, InvalidToken(descMalformed)
	}
	sig, err := b64.DecodeString(s64)
	if err != nil || len(sig) != 64 {
		// RFC 7518 §3.4: R || S, 32 bytes each for P-256.
		return nil, InvalidToken(descSignature)
	}
	pub, err := v.publicKey(ctx, site.ID, hdr.Kid)
	if err != nil {
		return nil, err
	}
	if pub.Curve != elliptic.P256() {
		return nil, v.unavailable(ctx, site.ID, "site key is not a P-256 key", fmt.Errorf("bearer: site %d: key %q is not P-256", site.ID, hdr.Kid))
	}
	digest := sha256.Sum256([]byte(raw[:len(h64)+1+len(p64)]))
	r := new(big.Int).SetBytes(sig[:32])
	s := new(big.Int).SetBytes(sig[32:])
	if !ecdsa.Verify(pub, digest[:], r, s) {
		return nil, InvalidToken(descSignature)
	}

	pb, err := b64.DecodeString(p64)
	if err != nil {
		return nil, InvalidToken(descMalformed)
	}
	var c wireClaims
	dec := json.NewDecoder(bytes.NewReader(pb))
	if err := dec.Decode(&c); err != nil || dec.More() {
		return nil, InvalidToken(descMalformed)
	}
	if err := v.checkClaims(site, &c, now); err != nil {
		return nil, err
	}
	tok := &Token{
		Site:     site.ID,
		Subject:  c.Subject,
		ClientID: c.ClientID,
		GrantID:  c.GrantID,
		JTI:      c.JTI,
		Audience: site.Resource(),
		Scopes:   strings.Fields(c.Scope),
		IssuedAt: time.Unix(c.IssuedAt, 0).UTC(),
		Expiry:   time.Unix(c.Expiry, 0).UTC(),
	}
	if c.AuthTime != 0 {
		tok.AuthTime = time.Unix(c.AuthTime, 0).UTC()
	}
	return &verified{
		tok:   tok,
		site:  site.ID,
		iss:   site.Issuer(),
		aud:   site.Resource(),
		kid:   hdr.Kid,
		pub:   pub,
		until: tok.Expiry.Add(v.skew),
	}, nil
}

// checkClaims applies RFC 9068 §4 and Lectern's own requirements.
func (v *Verifier) checkClaims(site *tenant.Site, c *wireClaims, now time.Time) error {
	if c.Issuer != site.Issuer() {
		return InvalidToken(descIssuer)
	}
	// The authorization server always writes the canonical resource
	// (DESIGN §5), so the comparison is exact: no normalisation here.
	found := false
	for _, a := range c.Audience {
		if a == site.Resource() {
			found = true
			break
		}
	}
	if !found {
		return InvalidToken(descAudience)
	}
	switch {
	case c.Expiry == 0:
		return InvalidToken("the access token has no exp claim")
	case !time.Unix(c.Expiry, 0).After(now.Add(-v.skew)):
		return InvalidToken(descExpired)
	case c.IssuedAt == 0:
		return InvalidToken("the access token has no iat claim")
	case time.Unix(c.IssuedAt, 0).After(now.Add(v.skew)):
		return InvalidToken(descFuture)
	case c.Subject == "":
		return InvalidToken("the access token has no sub claim")
	case c.ClientID == "":
		return InvalidToken("the access token has no client_id claim")
	case c.JTI == "":
		return InvalidToken("the access token has no jti claim")
	case c.GrantID == "":
		return InvalidToken("the access token has no grant_id claim")
	}
	return nil
}

// isB64URL reports whether s is non-empty and uses only the base64url
// alphabet (RFC 4648 §5), without padding.
func isB64URL(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
