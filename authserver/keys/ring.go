package keys

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// ring is one site's keys as served from memory. It is immutable once
// built; a reload replaces it.
type ring struct {
	loadedAt time.Time
	// expires is the end of CacheTTL, or earlier: when a pending key
	// activates or a retired key leaves the JWKS.
	expires time.Time

	// signerRow is the key that signs, opened on first use (signingKey):
	// a site whose tokens are only verified never unseals its private key.
	signerRow *storage.SiteKey
	signerPub *ecdsa.PublicKey
	// signerErr is set at build (the signer's public JWK is unusable) and
	// never changed; openErr and opened are set once, by open.
	signerErr error
	open      sync.Once
	openErr   error
	opened    atomic.Pointer[SigningKey]
	public    map[string]publishedKey
	jwks      []byte
	jwksErr   error

	// used is the UnixNano of the last use, for eviction.
	used atomic.Int64
}

type publishedKey struct {
	pub *ecdsa.PublicKey
	err error
}

// plan is the ring's state at one instant, derived from the stored rows and
// the clock alone, so that all replicas agree on it.
type plan struct {
	signer *storage.SiteKey
	// published: signer, pending next keys (soonest first), retired keys
	// (most recently retired first).
	published []*storage.SiteKey
	// promote is the signer when it is still stored as "next".
	promote *storage.SiteKey
	// retire are keys stored as active or next that the signer replaces;
	// their RetiredAt is set to the signer's ActivatesAt.
	retire  []*storage.SiteKey
	expires time.Time
}

// resolve decides which key signs at now: of the active keys and the next
// keys whose ActivatesAt has passed, the one that activated last (ties:
// created last). The others among them are retired as of its activation.
// Normally that is one rotation: the due next key replaces the active one.
func resolve(rows []storage.SiteKey, now time.Time, retain time.Duration) *plan {
	var cands, pending, retired []*storage.SiteKey
	for i := range rows {
		k := &rows[i]
		switch k.State {
		case storage.KeyActive:
			cands = append(cands, k)
		case storage.KeyNext:
			if k.ActivatesAt.After(now) {
				pending = append(pending, k)
			} else {
				cands = append(cands, k)
			}
		case storage.KeyRetired:
			if k.RetiredAt != nil && k.RetiredAt.Add(retain).After(now) {
				retired = append(retired, k)
			}
		}
	}
	p := &plan{}
	for _, k := range cands {
		if p.signer == nil || later(k, p.signer) {
			p.signer = k
		}
	}
	if s := p.signer; s != nil {
		if s.State == storage.KeyNext {
			p.promote = s
		}
		at := s.ActivatesAt
		for _, k := range cands {
			if k == s {
				continue
			}
			k.RetiredAt = &at
			p.retire = append(p.retire, k)
			if at.Add(retain).After(now) {
				retired = append(retired, k)
			}
		}
		p.published = append(p.published, s)
	}
	slices.SortStableFunc(pending, func(a, b *storage.SiteKey) int { return a.ActivatesAt.Compare(b.ActivatesAt) })
	slices.SortStableFunc(retired, func(a, b *storage.SiteKey) int { return b.RetiredAt.Compare(*a.RetiredAt) })
	p.published = append(p.published, pending...)
	p.published = append(p.published, retired...)

	for _, k := range pending {
		p.expires = earliest(p.expires, k.ActivatesAt)
	}
	for _, k := range retired {
		p.expires = earliest(p.expires, k.RetiredAt.Add(retain))
	}
	return p
}

// later orders candidates for signing: later activation, then later
// creation, then higher row id.
func later(a, b *storage.SiteKey) bool {
	if c := a.ActivatesAt.Compare(b.ActivatesAt); c != 0 {
		return c > 0
	}
	if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
		return c > 0
	}
	return a.ID > b.ID
}

func earliest(cur, t time.Time) time.Time {
	if cur.IsZero() || t.Before(cur) {
		return t
	}
	return cur
}

// build turns a plan into a ring: it parses the public JWKs, opens the
// signer's private key (or reuses it from prev when the row is the same)
// and serializes the JWKS once.
func (m *Manager) build(site tenant.ID, now time.Time, p *plan, prev *ring) *ring {
	r := &ring{
		loadedAt: now,
		expires:  now.Add(m.ttl),
		public:   make(map[string]publishedKey, len(p.published)),
	}
	if !p.expires.IsZero() && p.expires.Before(r.expires) {
		r.expires = p.expires
	}
	set := jose.JSONWebKeySet{Keys: make([]jose.JSONWebKey, 0, len(p.published))}
	for _, k := range p.published {
		pub, err := parsePublicJWK(k)
		if err != nil {
			cerr := &CorruptKeyError{Site: site, KID: k.KID, Err: err}
			r.public[k.KID] = publishedKey{err: cerr}
			if r.jwksErr == nil {
				r.jwksErr = cerr
			}
			continue
		}
		r.public[k.KID] = publishedKey{pub: pub}
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: pub, KeyID: k.KID, Algorithm: Alg, Use: "sig"})
	}
	if r.jwksErr == nil {
		b, err := json.Marshal(set)
		if err != nil {
			r.jwksErr = fmt.Errorf("keys: site %d: serialize JWKS: %w", site, err)
		}
		r.jwks = b
	}
	if s := p.signer; s != nil {
		// A copy of the row, not a pointer into the rows read: that would
		// keep the whole result slice (every key of the ring, and the
		// slice's spare capacity) alive with the ring, some 4 KB a site.
		row := storage.SiteKey{SiteID: s.SiteID, KID: s.KID, SealedPrivate: s.SealedPrivate, State: s.State,
			ActivatesAt: s.ActivatesAt, RetiredAt: s.RetiredAt, RotateAt: s.RotateAt, CreatedAt: s.CreatedAt}
		r.signerRow = &row
		if pk := r.public[s.KID]; pk.err != nil {
			r.signerErr = pk.err
		} else {
			r.signerPub = pk.pub
			if prev != nil && prev.signerRow != nil && prev.signerRow.KID == s.KID && bytes.Equal(prev.signerRow.SealedPrivate, s.SealedPrivate) {
				if sk := prev.opened.Load(); sk != nil {
					// Same row as before: keep the opened key and its
					// cached jose signers instead of opening it again.
					r.open.Do(func() { r.opened.Store(sk) })
				}
			}
		}
	}
	return r
}

// signingKey returns the ring's signing key, unsealing it on first use.
// A ring without one returns nil and no error.
func (m *Manager) signingKey(site tenant.ID, r *ring) (*SigningKey, error) {
	if r.signerRow == nil {
		return nil, nil
	}
	if r.signerErr != nil {
		return nil, r.signerErr
	}
	r.open.Do(func() {
		sk, err := m.openSigner(site, r.signerRow, r.signerPub)
		if err != nil {
			r.openErr = err
			return
		}
		r.opened.Store(sk)
	})
	if r.openErr != nil {
		return nil, r.openErr
	}
	return r.opened.Load(), nil
}

// parsePublicJWK checks that a row's public JWK is a public P-256 key with
// the row's kid. A JWK carrying private parameters is refused: it would be
// published.
func parsePublicJWK(k *storage.SiteKey) (*ecdsa.PublicKey, error) {
	if k.Alg != Alg {
		return nil, fmt.Errorf("alg %q, want %s", k.Alg, Alg)
	}
	var jwk jose.JSONWebKey
	if err := jwk.UnmarshalJSON([]byte(k.PublicJWK)); err != nil {
		return nil, fmt.Errorf("public JWK does not parse: %w", err)
	}
	if !jwk.IsPublic() {
		return nil, errors.New("public JWK holds private parameters")
	}
	pub, ok := jwk.Key.(*ecdsa.PublicKey)
	if !ok || pub.Curve != elliptic.P256() {
		return nil, errors.New("public JWK is not a P-256 key")
	}
	if jwk.KeyID != k.KID {
		return nil, errors.New("public JWK kid does not match the row")
	}
	if jwk.Algorithm != "" && jwk.Algorithm != Alg {
		return nil, fmt.Errorf("public JWK alg %q, want %s", jwk.Algorithm, Alg)
	}
	return pub, nil
}

// openSigner unseals and parses the private key of k and checks it against
// the published public key. Errors name the step, never the key.
func (m *Manager) openSigner(site tenant.ID, k *storage.SiteKey, pub *ecdsa.PublicKey) (*SigningKey, error) {
	corrupt := func(err error) error { return &CorruptKeyError{Site: site, KID: k.KID, Err: err} }
	der, err := m.sealer.Open(site, k.KID, k.SealedPrivate)
	if err != nil {
		return nil, corrupt(err)
	}
	parsed, err := x509.ParsePKCS8PrivateKey(der)
	clear(der)
	if err != nil {
		return nil, corrupt(errors.New("private key is not valid PKCS #8"))
	}
	priv, ok := parsed.(*ecdsa.PrivateKey)
	if !ok || priv.Curve != elliptic.P256() {
		return nil, corrupt(errors.New("private key is not a P-256 key"))
	}
	if !priv.PublicKey.Equal(pub) {
		return nil, corrupt(errors.New("private key does not match the public JWK"))
	}
	return &SigningKey{KID: k.KID, Private: priv, Public: &priv.PublicKey}, nil
}
