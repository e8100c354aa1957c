package keys

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/lectern/lectern/tenant"
)

// sealVersion is the first byte of every sealed blob. A new format (another
// AEAD, a KEK identifier for KEK rotation) gets a new version; Open refuses
// versions it does not know.
const sealVersion byte = 1

const (
	nonceSize = 12 // 96-bit GCM nonce, fresh from crypto/rand for every seal
	tagSize   = 16
)

// adContext names what a sealed blob is, so that a blob of this kind can
// never be confused with another use of the same KEK.
const adContext = "lectern/site-key-private/v1"

// ErrSealedKey means a sealed private key did not open: it was sealed under
// another key-encryption key, altered, or moved to another site or kid.
var ErrSealedKey = errors.New("sealed private key does not open (wrong key-encryption key, or the row was altered or moved)")

// Sealer seals private keys with AES-256-GCM under the key-encryption key.
// A sealed blob is
//
//	version (1 byte) || nonce (12 bytes) || ciphertext || tag (16 bytes)
//
// and its additional data binds it to the version, the site and the kid, so
// a row copied to another site or relabelled with another kid does not open.
// A Sealer is safe for concurrent use.
type Sealer struct {
	aead cipher.AEAD
}

// NewSealer returns a Sealer for a 32-byte key-encryption key.
func NewSealer(kek []byte) (*Sealer, error) {
	if len(kek) != KEKSize {
		return nil, fmt.Errorf("keys: key-encryption key is %d bytes, want %d", len(kek), KEKSize)
	}
	block, err := aes.NewCipher(kek)
	if err != nil {
		return nil, fmt.Errorf("keys: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("keys: %w", err)
	}
	return &Sealer{aead: aead}, nil
}

// Seal encrypts plaintext for the key kid of site.
func (s *Sealer) Seal(site tenant.ID, kid string, plaintext []byte) ([]byte, error) {
	out := make([]byte, 1+nonceSize, 1+nonceSize+len(plaintext)+tagSize)
	out[0] = sealVersion
	if _, err := rand.Read(out[1:]); err != nil {
		return nil, fmt.Errorf("keys: nonce: %w", err)
	}
	return s.aead.Seal(out, out[1:1+nonceSize], plaintext, additionalData(sealVersion, site, kid)), nil
}

// Open decrypts a blob that Seal produced for the same site and kid. Any
// failure is ErrSealedKey (or an unknown-version error); which one of wrong
// KEK, tampering or relocation it was is deliberately not distinguishable.
func (s *Sealer) Open(site tenant.ID, kid string, sealed []byte) ([]byte, error) {
	if len(sealed) < 1+nonceSize+tagSize {
		return nil, fmt.Errorf("keys: %w: too short", ErrSealedKey)
	}
	if sealed[0] != sealVersion {
		return nil, fmt.Errorf("keys: sealed private key has unknown format version %d", sealed[0])
	}
	nonce, ct := sealed[1:1+nonceSize], sealed[1+nonceSize:]
	pt, err := s.aead.Open(nil, nonce, ct, additionalData(sealed[0], site, kid))
	if err != nil {
		return nil, fmt.Errorf("keys: %w", ErrSealedKey)
	}
	return pt, nil
}

// additionalData is context || version || site (8 bytes, big endian) ||
// len(kid) (2 bytes) || kid. Every field but the last has a fixed length or
// a length prefix, so no two (site, kid) pairs encode alike.
func additionalData(version byte, site tenant.ID, kid string) []byte {
	ad := make([]byte, 0, len(adContext)+1+8+2+len(kid))
	ad = append(ad, adContext...)
	ad = append(ad, version)
	ad = binary.BigEndian.AppendUint64(ad, uint64(site))
	ad = binary.BigEndian.AppendUint16(ad, uint16(len(kid)))
	return append(ad, kid...)
}
