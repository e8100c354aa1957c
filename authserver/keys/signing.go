package keys

import (
	"crypto/ecdsa"
	"fmt"
	"sync"

	jose "github.com/go-jose/go-jose/v4"
)

// SigningKey is a site's active key, opened. Its fields are shared between
// goroutines and must be treated as read-only; the private key must never
// be logged or serialized.
type SigningKey struct {
	KID     string
	Private *ecdsa.PrivateKey
	Public  *ecdsa.PublicKey

	mu      sync.RWMutex
	signers map[string]jose.Signer // by typ
}

// Sign returns payload as a JWS in compact serialization (RFC 7515 §7.1),
// signed with ES256, with the protected header alg, kid and, unless typ is
// empty, typ ("at+jwt" for RFC 9068 access tokens, "JWT" for id_tokens).
func (k *SigningKey) Sign(payload []byte, typ string) (string, error) {
	s, err := k.signer(typ)
	if err != nil {
		return "", err
	}
	jws, err := s.Sign(payload)
	if err != nil {
		return "", fmt.Errorf("keys: sign with %q: %w", k.KID, err)
	}
	return jws.CompactSerialize()
}

// signer returns the cached jose.Signer for typ. go-jose signers hold no
// per-signature state, so one serves all goroutines.
func (k *SigningKey) signer(typ string) (jose.Signer, error) {
	k.mu.RLock()
	s, ok := k.signers[typ]
	k.mu.RUnlock()
	if ok {
		return s, nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if s, ok := k.signers[typ]; ok {
		return s, nil
	}
	opts := &jose.SignerOptions{}
	if typ != "" {
		opts = opts.WithType(jose.ContentType(typ))
	}
	s, err := jose.NewSigner(jose.SigningKey{
		Algorithm: jose.ES256,
		Key:       jose.JSONWebKey{Key: k.Private, KeyID: k.KID, Algorithm: Alg, Use: "sig"},
	}, opts)
	if err != nil {
		return nil, fmt.Errorf("keys: signer for %q: %w", k.KID, err)
	}
	if k.signers == nil {
		k.signers = make(map[string]jose.Signer)
	}
	k.signers[typ] = s
	return s, nil
}
