package mfa

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net"
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

// WebAuthnCredentials implements webauthn.User. A clone warning stored
// before it was refused (see ErrCloned) is cleared: only the assertion
// being checked may raise it.
func (a *Account) WebAuthnCredentials() []webauthn.Credential {
	out := make([]webauthn.Credential, 0, len(a.Passkeys))
	for _, p := range a.Passkeys {
		if c, err := DecodeCredential(p.Data); err == nil {
			c.Authenticator.CloneWarning = false
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
	// Step is the second-factor step a sign-in with a passkey completes.
	Step string `json:"step,omitempty"`
	// Registration: the ceremony adds a passkey (BeginRegistration); a
	// sign-in's, which names its person too, never can.
	Registration bool `json:"registration,omitempty"`
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

// HasAnyFactor reports whether the account has a second factor anywhere:
// an authenticator app, or a passkey at any site. Whoever has one must
// prove one before changing the account's factors, wherever they are
// signed in (a site where the person's passkeys do not work must not let
// the password alone set up an app that works at every site).
func HasAnyFactor(ctx context.Context, s storage.FactorStore, userID string) (bool, error) {
	switch _, err := s.TOTPOf(ctx, userID); {
	case err == nil:
		return true, nil
	case !errors.Is(err, storage.ErrNotFound):
		return false, err
	}
	n, err := s.CountPasskeys(ctx, userID)
	return n > 0, err
}

// Store is what the passkey ceremonies read and write; they record a
// cloned passkey's refusal in the site's audit log themselves.
type Store interface {
	storage.FactorStore
	UserByID(ctx context.Context, id string) (*storage.User, error)
	RecordAudit(ctx context.Context, e *storage.AuditEvent) error
}

// ErrCloned refuses a passkey whose signature counter did not advance: a
// nonzero count at or below the one last seen (WebAuthn §7.2 step 17), the
// mark of a copy of its private key used beside the original. The
// sign-in is refused as any other unusable passkey is, audited as
// login.passkey_cloned, and the passkey's record is left as it was, so
// the original, whose count is ahead, keeps working. Synced passkeys,
// which always count 0, are not affected.
var ErrCloned = errors.New("mfa: the passkey's signature counter went backwards (a cloned authenticator?)")

// Party is a site's relying party, ready for ceremonies.
type Party struct {
	site *tenant.Site
	w    *webauthn.WebAuthn
}

// PartyOf returns the relying party of site.
func PartyOf(site *tenant.Site) (*Party, error) {
	w, err := RelyingParty(site)
	if err != nil {
		return nil, err
	}
	return &Party{site: site, w: w}, nil
}

// BeginLogin starts a sign-in with one of acct's passkeys and returns the
// browser's options (for navigator.credentials.get).
func (p *Party) BeginLogin(acct *Account, c *Ceremony) (any, error) {
	if len(acct.Passkeys) == 0 {
		return nil, errors.New("mfa: no passkey at this site")
	}
	a, data, err := p.w.BeginLogin(acct)
	if err != nil {
		return nil, err
	}
	c.Data = *data
	return a, nil
}

// BeginDiscoverable starts a sign-in with any passkey of the site (the
// browser offers the person's passkeys; no account is named).
func (p *Party) BeginDiscoverable(c *Ceremony) (any, error) {
	a, data, err := p.w.BeginDiscoverableLogin()
	if err != nil {
		return nil, err
	}
	c.Data = *data
	return a, nil
}

// FinishLogin checks the authenticator's answer (credential, JSON) to c
// for acct and records the passkey's use (ErrCloned: refused).
func (p *Party) FinishLogin(ctx context.Context, store Store, acct *Account, c *Ceremony, credential string, at time.Time) error {
	if c.Registration {
		return errors.New("mfa: a registration ceremony cannot sign in")
	}
	parsed, err := protocol.ParseCredentialRequestResponseBytes([]byte(credential))
	if err != nil {
		return err
	}
	cred, err := p.w.ValidateLogin(acct, c.Data, parsed)
	if err != nil {
		return err
	}
	return p.used(ctx, store, acct, cred, parsed, at)
}

// FinishDiscoverable checks the answer to a sign-in without an account
// named: the passkey must be one of the site's, and the user handle the
// authenticator returns must be its account's. It returns the account.
func (p *Party) FinishDiscoverable(ctx context.Context, store Store, c *Ceremony, credential string, at time.Time) (*Account, error) {
	if c.Registration {
		return nil, errors.New("mfa: a registration ceremony cannot sign in")
	}
	parsed, err := protocol.ParseCredentialRequestResponseBytes([]byte(credential))
	if err != nil {
		return nil, err
	}
	var acct *Account
	cred, err := p.w.ValidateDiscoverableLogin(func(rawID, userHandle []byte) (webauthn.User, error) {
		pk, err := store.PasskeyByCredentialID(ctx, p.site.ID, rawID)
		if err != nil {
			return nil, err
		}
		if subtle.ConstantTimeCompare([]byte(pk.UserID), userHandle) != 1 {
			return nil, errors.New("mfa: the passkey is another account's")
		}
		a, err := AccountAt(ctx, store, p.site.ID, pk.UserID)
		if err != nil {
			return nil, err
		}
		acct = a
		return a, nil
	}, c.Data, parsed)
	if err != nil {
		return nil, err
	}
	if acct == nil {
		return nil, errors.New("mfa: no account")
	}
	return acct, p.used(ctx, store, acct, cred, parsed, at)
}

// BeginRegistration starts adding a passkey to acct: a discoverable
// credential with user verification, never one the authenticator has.
func (p *Party) BeginRegistration(acct *Account, c *Ceremony) (any, error) {
	a, data, err := p.w.BeginRegistration(acct, webauthn.WithExclusions(acct.Exclusions()),
		webauthn.WithResidentKeyRequirement(protocol.ResidentKeyRequirementRequired))
	if err != nil {
		return nil, err
	}
	c.Data = *data
	c.UserID, c.Registration = acct.User.ID, true
	return a, nil
}

// FinishRegistration checks the authenticator's answer and stores the new
// passkey under name.
func (p *Party) FinishRegistration(ctx context.Context, store storage.FactorStore, acct *Account, c *Ceremony, credential, name string, at time.Time) (*storage.Passkey, error) {
	if !c.Registration || c.UserID != acct.User.ID {
		return nil, errors.New("mfa: the ceremony is not a registration of this account")
	}
	parsed, err := protocol.ParseCredentialCreationResponseBytes([]byte(credential))
	if err != nil {
		return nil, err
	}
	cred, err := p.w.CreateCredential(acct, c.Data, parsed)
	if err != nil {
		return nil, err
	}
	data, err := EncodeCredential(cred)
	if err != nil {
		return nil, err
	}
	pk := &storage.Passkey{SiteID: p.site.ID, UserID: acct.User.ID, CredentialID: cred.ID, Name: name, Data: data, CreatedAt: at}
	return pk, store.CreatePasskey(ctx, pk)
}

// used records a checked sign-in with cred (its new counter and flags),
// or refuses it with ErrCloned.
func (p *Party) used(ctx context.Context, store Store, acct *Account, cred *webauthn.Credential, parsed *protocol.ParsedCredentialAssertionData, at time.Time) error {
	pk, err := store.PasskeyByCredentialID(ctx, p.site.ID, cred.ID)
	if err != nil {
		return err
	}
	if cred.Authenticator.CloneWarning {
		_ = store.RecordAudit(ctx, &storage.AuditEvent{SiteID: p.site.ID, Actor: pk.UserID, Action: "login.passkey_cloned", Target: acct.User.Email,
			Details: map[string]any{"passkey": pk.Name, "passkey_id": pk.ID, "count_seen": cred.Authenticator.SignCount,
				"count_presented": parsed.Response.AuthenticatorData.Counter}, IP: tenant.ClientIPFrom(ctx), CreatedAt: at})
		return ErrCloned
	}
	data, err := EncodeCredential(cred)
	if err != nil {
		return err
	}
	return store.PasskeyUsed(ctx, p.site.ID, pk.ID, data, at)
}

// AccountAt is the user with their passkeys at site.
func AccountAt(ctx context.Context, store Store, site tenant.ID, userID string) (*Account, error) {
	u, err := store.UserByID(ctx, userID)
	if err != nil {
		return nil, err
	}
	keys, err := store.Passkeys(ctx, site, userID)
	if err != nil {
		return nil, err
	}
	return &Account{User: u, Passkeys: keys}, nil
}

// Available reports whether the site can be a WebAuthn relying party: its
// host must be a domain (an IP address is no valid RP ID).
func Available(site *tenant.Site) bool {
	u, err := url.Parse(site.Origin)
	return err == nil && u.Hostname() != "" && net.ParseIP(u.Hostname()) == nil
}

// Answer is the JSON the passkey script (ui/static/passkey.js) reads: the
// options of a ceremony begun, where to go after one finished, or why not.
type Answer struct {
	Ceremony string `json:"ceremony,omitempty"`
	Options  any    `json:"options,omitempty"`
	Redirect string `json:"redirect,omitempty"`
	Error    string `json:"error,omitempty"`
}
