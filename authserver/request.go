package authserver

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/url"
	"time"

	json "github.com/segmentio/encoding/json"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// authRequest is a validated authorization request, kept in the cache while
// the person signs in and consents.
type authRequest struct {
	ID          string   `json:"id"`
	ClientID    string   `json:"client_id"`
	RedirectURI string   `json:"redirect_uri"`
	Scopes      []string `json:"scopes"`
	State       string   `json:"state"`
	Nonce       string   `json:"nonce,omitempty"`
	Challenge   string   `json:"code_challenge"`
	Resource    string   `json:"resource"` // canonical: the token audience
	Prompt      string   `json:"prompt,omitempty"`
	// StaleAuth (Unix nanoseconds, 0: none) is the authentication time of
	// the session this request refused (prompt=login, max_age: OpenID
	// Connect Core §3.1.2.1): only a session signed in after it continues
	// the request, so no later step (consent, continue) finishes it with
	// the session it was refused. The session's own time is compared with
	// itself, not with a clock, so replicas' clocks need not agree.
	StaleAuth int64 `json:"stale_auth,omitempty"`
}

// signInPath is the sign-in form for the pending request ar.
func (ar *authRequest) signInPath() string { return "/login?auth_request=" + url.QueryEscape(ar.ID) }

// codeRecord is what an authorization code stands for (DESIGN §4): bound to
// client, redirect_uri, PKCE challenge, resource, scopes, nonce, user and
// auth_time, with the user's claims for the id_token.
type codeRecord struct {
	ClientID    string   `json:"client_id"`
	RedirectURI string   `json:"redirect_uri"`
	Challenge   string   `json:"code_challenge"`
	Resource    string   `json:"resource"`
	Scopes      []string `json:"scopes"`
	Nonce       string   `json:"nonce,omitempty"`
	UserID      string   `json:"user_id"`
	AuthTime    int64    `json:"auth_time"`
	AMR         []string `json:"amr,omitempty"`
	Profile     Profile  `json:"profile"`
}

// codeKey is the cache key of a code: only its hash is stored.
func codeKey(site tenant.ID, kind, code string) string {
	sum := sha256.Sum256([]byte(code))
	return storage.CacheKey(site, kind, base64.RawURLEncoding.EncodeToString(sum[:]))
}

// issueCode stores a new single-use code for rec and returns it.
func (s *Server) issueCode(ctx context.Context, site tenant.ID, rec *codeRecord) (string, error) {
	code := randomToken()
	b, err := json.Marshal(rec)
	if err != nil {
		return "", err
	}
	if err := s.cache.Set(ctx, codeKey(site, "code", code), b, s.codeLifetime); err != nil {
		return "", err
	}
	return code, nil
}

// peekCode reads the code's record without taking it. The code stays in
// the cache until its grant is in the database (forgetCode), so that a
// database failure at the exchange (503, "try again") does not burn it: the
// retry finds it. Single use is the database's decision, not the cache's:
// the grant's ID derives from the code, so a second redemption collides
// with the first one's grant (storage.ErrConflict), also when two race.
func (s *Server) peekCode(ctx context.Context, site tenant.ID, code string) (*codeRecord, error) {
	raw, err := s.cache.Get(ctx, codeKey(site, "code", code))
	if errors.Is(err, storage.ErrCacheMiss) {
		return nil, errCodeUnknown
	}
	if err != nil {
		return nil, err
	}
	var rec codeRecord
	if err := json.Unmarshal(raw, &rec); err != nil {
		return nil, errCodeUnknown
	}
	return &rec, nil
}

// forgetCode deletes a code that was redeemed or misused. A delete that
// fails leaves the code until it expires: presenting it again then reaches
// the database, which refuses it (and revokes what it issued).
func (s *Server) forgetCode(ctx context.Context, site tenant.ID, code string) {
	if err := s.cache.Delete(context.WithoutCancel(ctx), codeKey(site, "code", code)); err != nil {
		s.logger.WarnContext(ctx, "a used authorization code was not deleted from the cache; it expires by itself", "err", err)
	}
}

// grantIDForCode derives the ID of the grant a code creates. A code
// presented again after its redemption names that grant, which is then
// revoked (DESIGN §4) — durably in the database, with no replay marker to
// lose. The ID reveals nothing of the code (a one-way hash).
func grantIDForCode(code string) string {
	sum := sha256.Sum256([]byte("lectern-grant:" + code))
	return "grt_" + base64.RawURLEncoding.EncodeToString(sum[:16])
}

var errCodeUnknown = errors.New("authorization code unknown, expired or used")

// consentTTL is how long a remembered consent is cached; the database is
// the source.
const consentTTL = 10 * time.Minute
