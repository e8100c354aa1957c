package mfa

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/url"
	"time"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// CeremonyLifetime bounds how long a passkey ceremony (its challenge) is
// kept: the browser's prompt times out before (Timeout).
const (
	CeremonyLifetime = 5 * time.Minute
	Timeout          = 2 * time.Minute
)

// RelyingParty is the site's WebAuthn relying party: its ID is the site's
// host, its one origin the site's origin. Each site is its own relying
// party, so a passkey made at one site cannot sign in at another.
func RelyingParty(site *tenant.Site) (*webauthn.WebAuthn, error) {
	u, err := url.Parse(site.Origin)
	if err != nil || u.Hostname() == "" {
		return nil, errors.New("mfa: the site's origin has no host")
	}
	return webauthn.New(&webauthn.Config{
		RPID: u.Hostname(), RPDisplayName: site.Name, RPOrigins: []string{site.Origin},
		AuthenticatorSelection: protocol.AuthenticatorSelection{
			ResidentKey: protocol.ResidentKeyRequirementRequired, UserVerification: protocol.VerificationRequired,
		},
		Timeouts: webauthn.TimeoutsConfig{
			Login:        webauthn.TimeoutConfig{Enforce: true, Timeout: Timeout, TimeoutUVD: Timeout},
			Registration: webauthn.TimeoutConfig{Enforce: true, Timeout: Timeout, TimeoutUVD: Timeout},
		},
	})
}

// Account is a person as WebAuthn sees them at one site: the user handle
// is the account's ID, the credentials their passkeys at that site.
type Account struct {
	User     *storage.User
	Passkeys []storage.Passkey
}

var _ webauthn.User = (*Account)(nil)

// WebAuthnID implements webauthn.User.
func (a *Account) WebAuthnID() []byte { return []byte(a.User.ID) }

// WebAuthnName implements webauthn.User.
func (a *Account) WebAuthnName() string { return a.User.Email }

// WebAuthnDisplayName implements webauthn.User.
func (a *Account) WebAuthnDisplayName() string {
	if a.User.Name != "" {
		return a.User.Name
	}
	return a.User.Email
}

// WebAuthnCredentials implements webauthn.User.
func (a *Account) WebAuthnCredentials() []webauthn.Credential {
	out := make([]webauthn.Credential, 0, len(a.Passkeys))
	for _, p := range a.Passkeys {
		if c, err := DecodeCredential(p.Data); err == nil {
			out = append(out, *c)
		}
	}
	return out
}

// Exclusions are the account's passkeys, which a new registration must not
// create again on the same authenticator.
func (a *Account) Exclusions() []protocol.CredentialDescriptor {
	var out []protocol.CredentialDescriptor
	for _, c := range a.WebAuthnCredentials() {
		out = append(out, c.Descriptor())
	}
	return out
}

// EncodeCredential is the stored form of a credential.
func EncodeCredential(c *webauthn.Credential) (string, error) {
	b, err := json.Marshal(c)
	return string(b), err
}

// DecodeCredential reads what EncodeCredential wrote.
func DecodeCredential(s string) (*webauthn.Credential, error) {
	var c webauthn.Credential
	if err := json.Unmarshal([]byte(s), &c); err != nil {
		return nil, err
	}
	return &c, nil
}

// Ceremony is a passkey ceremony in progress: the challenge and what it
// was started for, kept in the cache under a random ID for at most
// CeremonyLifetime and taken (deleted) by its one answer.
type Ceremony struct {
	Data webauthn.SessionData `json:"data"`
	// UserID is the signed-in person a registration is for; empty for a
	// sign-in.
	UserID string `json:"user,omitempty"`
	// Request and ReturnTo are where a sign-in continues.
	Request  string `json:"request,omitempty"`
	ReturnTo string `json:"return_to,omitempty"`
}

func ceremonyKey(site tenant.ID, id string) string { return storage.CacheKey(site, "webauthn", id) }

// SaveCeremony keeps c at site and returns its ID.
func SaveCeremony(ctx context.Context, cache storage.Cache, site tenant.ID, c *Ceremony) (string, error) {
	var b [32]byte
	_, _ = rand.Read(b[:])
	id := base64.RawURLEncoding.EncodeToString(b[:])
	raw, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	return id, cache.Set(ctx, ceremonyKey(site, id), raw, CeremonyLifetime)
}

// TakeCeremony returns and deletes the ceremony id of site; nil when there
// is none (expired, used, another site's, or never started).
func TakeCeremony(ctx context.Context, cache storage.Cache, site tenant.ID, id string) (*Ceremony, error) {
	if len(id) != 43 {
		return nil, nil
	}
	raw, err := cache.GetDel(ctx, ceremonyKey(site, id))
	if errors.Is(err, storage.ErrCacheMiss) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var c Ceremony
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, nil
	}
	return &c, nil
}

// HasFactor reports whether the account has a second factor at site: an
// authenticator app (any site) or a passkey of this site.
func HasFactor(ctx context.Context, s storage.FactorStore, site tenant.ID, userID string) (totp bool, passkeys int, err error) {
	switch _, err := s.TOTPOf(ctx, userID); {
	case err == nil:
		totp = true
	case !errors.Is(err, storage.ErrNotFound):
		return false, 0, err
	}
	keys, err := s.Passkeys(ctx, site, userID)
	if err != nil {
		return false, 0, err
	}
	return totp, len(keys), nil
}
