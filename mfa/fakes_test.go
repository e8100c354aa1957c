package mfa

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/go-webauthn/webauthn/protocol/webauthncbor"
	"github.com/go-webauthn/webauthn/protocol/webauthncose"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// memStore is an in-memory Store for the ceremonies and the code checks.
type memStore struct {
	mu       sync.Mutex
	users    map[string]*storage.User
	passkeys []storage.Passkey
	totp     map[string]*storage.TOTP
	audit    []storage.AuditEvent
	// totpOf, when set, runs before TOTPOf answers (a test's barrier).
	totpOf func()
}

var _ Store = (*memStore)(nil)

func newMemStore(users ...*storage.User) *memStore {
	s := &memStore{users: map[string]*storage.User{}, totp: map[string]*storage.TOTP{}}
	for _, u := range users {
		s.users[u.ID] = u
	}
	return s
}

func (s *memStore) UserByID(_ context.Context, id string) (*storage.User, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if u, ok := s.users[id]; ok {
		return u, nil
	}
	return nil, storage.ErrNotFound
}

func (s *memStore) RecordAudit(_ context.Context, e *storage.AuditEvent) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.audit = append(s.audit, *e)
	return nil
}

func (s *memStore) actions() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, e := range s.audit {
		out = append(out, e.Action)
	}
	return out
}

func (s *memStore) CreatePasskey(_ context.Context, p *storage.Passkey) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, q := range s.passkeys {
		if q.SiteID == p.SiteID && bytes.Equal(q.CredentialID, p.CredentialID) {
			return storage.ErrConflict
		}
	}
	p.ID = int64(len(s.passkeys) + 1)
	s.passkeys = append(s.passkeys, *p)
	return nil
}

func (s *memStore) Passkeys(_ context.Context, site tenant.ID, userID string) ([]storage.Passkey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []storage.Passkey
	for _, p := range s.passkeys {
		if p.SiteID == site && p.UserID == userID {
			out = append(out, p)
		}
	}
	return out, nil
}

func (s *memStore) CountPasskeys(_ context.Context, userID string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, p := range s.passkeys {
		if p.UserID == userID {
			n++
		}
	}
	return n, nil
}

func (s *memStore) PasskeyByCredentialID(_ context.Context, site tenant.ID, id []byte) (*storage.Passkey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.passkeys {
		if p.SiteID == site && bytes.Equal(p.CredentialID, id) {
			return &p, nil
		}
	}
	return nil, storage.ErrNotFound
}

func (s *memStore) PasskeyUsed(_ context.Context, site tenant.ID, id int64, data string, at time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.passkeys {
		if p := &s.passkeys[i]; p.SiteID == site && p.ID == id {
			p.Data, p.LastUsedAt = data, &at
			return nil
		}
	}
	return storage.ErrNotFound
}

func (s *memStore) RenamePasskey(context.Context, tenant.ID, string, int64, string) error {
	return storage.ErrNotFound
}

func (s *memStore) DeletePasskey(context.Context, tenant.ID, string, int64) error {
	return storage.ErrNotFound
}

func (s *memStore) TOTPOf(_ context.Context, userID string) (*storage.TOTP, error) {
	if s.totpOf != nil {
		s.totpOf()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.totp[userID]; ok {
		c := *t
		return &c, nil
	}
	return nil, storage.ErrNotFound
}

func (s *memStore) EnableTOTP(_ context.Context, t *storage.TOTP, _ [][]byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := *t
	s.totp[t.UserID] = &c
	return nil
}

func (s *memStore) DisableTOTP(_ context.Context, userID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.totp, userID)
	return nil
}

func (s *memStore) UseTOTPStep(_ context.Context, userID string, step int64) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.totp[userID]
	if !ok || t.LastStep >= step {
		return false, nil
	}
	t.LastStep = step
	return true, nil
}

func (s *memStore) UseRecoveryCode(context.Context, string, []byte, time.Time) (bool, error) {
	return false, nil
}

func (s *memStore) RecoveryCodesLeft(context.Context, string) (int, error) { return 0, nil }

// softKey is a software authenticator holding one passkey: it answers
// registrations and sign-ins as a browser would pass them on, with the
// signature counter a test sets.
type softKey struct {
	t      *testing.T
	origin string
	rpID   string
	id     []byte
	key    *ecdsa.PrivateKey
	user   []byte
}

func newSoftKey(t *testing.T, site *tenant.Site, rpID string) *softKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	id := make([]byte, 16)
	_, _ = rand.Read(id)
	return &softKey{t: t, origin: site.Origin, rpID: rpID, id: id, key: key}
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func (k *softKey) clientData(typ, challenge string) []byte {
	b, err := json.Marshal(map[string]any{"type": typ, "challenge": challenge, "origin": k.origin, "crossOrigin": false})
	if err != nil {
		k.t.Fatal(err)
	}
	return b
}

// authData is the authenticator data: the RP ID's hash, flags (user
// present and verified, plus attested credential data when att is set),
// the counter, then att.
func (k *softKey) authData(count uint32, att []byte) []byte {
	rp := sha256.Sum256([]byte(k.rpID))
	flags := byte(0x01 | 0x04)
	if att != nil {
		flags |= 0x40
	}
	out := append(rp[:], flags)
	out = binary.BigEndian.AppendUint32(out, count)
	return append(out, att...)
}

// register answers the registration ceremony c (BeginRegistration) with a
// "none" attestation, the counter starting at count.
func (k *softKey) register(c *Ceremony, count uint32) string {
	k.t.Helper()
	k.user = c.Data.UserID
	cose, err := webauthncbor.Marshal(webauthncose.EC2PublicKeyData{
		PublicKeyData: webauthncose.PublicKeyData{KeyType: int64(webauthncose.EllipticKey), Algorithm: int64(webauthncose.AlgES256)},
		Curve:         1, XCoord: k.key.X.FillBytes(make([]byte, 32)), YCoord: k.key.Y.FillBytes(make([]byte, 32)),
	})
	if err != nil {
		k.t.Fatal(err)
	}
	att := make([]byte, 16) // AAGUID
	att = binary.BigEndian.AppendUint16(att, uint16(len(k.id)))
	att = append(append(att, k.id...), cose...)
	obj, err := webauthncbor.Marshal(map[string]any{"fmt": "none", "attStmt": map[string]any{}, "authData": k.authData(count, att)})
	if err != nil {
		k.t.Fatal(err)
	}
	b, err := json.Marshal(map[string]any{"id": b64(k.id), "rawId": b64(k.id), "type": "public-key",
		"response": map[string]any{"clientDataJSON": b64(k.clientData("webauthn.create", c.Data.Challenge)), "attestationObject": b64(obj)}})
	if err != nil {
		k.t.Fatal(err)
	}
	return string(b)
}

// assert answers the sign-in ceremony c with the counter at count.
func (k *softKey) assert(c *Ceremony, count uint32) string {
	k.t.Helper()
	cd := k.clientData("webauthn.get", c.Data.Challenge)
	ad := k.authData(count, nil)
	h := sha256.Sum256(cd)
	digest := sha256.Sum256(append(append([]byte{}, ad...), h[:]...))
	sig, err := ecdsa.SignASN1(rand.Reader, k.key, digest[:])
	if err != nil {
		k.t.Fatal(err)
	}
	b, err := json.Marshal(map[string]any{"id": b64(k.id), "rawId": b64(k.id), "type": "public-key",
		"response": map[string]any{"clientDataJSON": b64(cd), "authenticatorData": b64(ad), "signature": b64(sig), "userHandle": b64(k.user)}})
	if err != nil {
		k.t.Fatal(err)
	}
	return string(b)
}
