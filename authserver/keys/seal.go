package keys

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/lectern/lectern/tenant"
)

// Sealed blob format versions. Version 1 (before KEK rotation) names no
// key-encryption key; version 2 carries the id of the KEK that sealed it,
// so a replica configured with several KEKs opens it with the right one.
const (
	sealV1 byte = 1
	sealV2 byte = 2
)

const (
	nonceSize = 12 // 96-bit GCM nonce, fresh from crypto/rand for every seal
	tagSize   = 16
	// kekIDSize is the length of a KEK id: the first 8 bytes of a SHA-256
	// over the key, enough to tell a handful of keys apart and nothing
	// about the key itself.
	kekIDSize = 8
)

// adContext names what a sealed blob is, so that a blob of this kind can
// never be confused with another use of the same KEK.
const adContext = "lectern/site-key-private/v1"

// ErrSealedKey means a sealed private key did not open: it was sealed under
// another key-encryption key, altered, or moved to another site or kid.
var ErrSealedKey = errors.New("sealed private key does not open (wrong key-encryption key, or the row was altered or moved)")

// Sealer seals private keys with AES-256-GCM under the current
// key-encryption key and opens blobs sealed under it or any previous one.
// A sealed blob is
//
//	2 || KEK id (8 bytes) || nonce (12 bytes) || ciphertext || tag (16 bytes)
//
// (version 1 blobs lack the KEK id) and its additional data binds it to the
// version, the KEK id, the site and the kid, so a row copied to another
// site or relabelled with another kid does not open. A Sealer is safe for
// concurrent use.
type Sealer struct {
	keys []sealKey // keys[0] seals; all open
}

type sealKey struct {
	id   [kekIDSize]byte
	aead cipher.AEAD
}

// NewSealer returns a Sealer that seals under kek (32 bytes) and also opens
// what previous KEKs sealed.
func NewSealer(kek []byte, previous ...[]byte) (*Sealer, error) {
	s := &Sealer{}
	for i, k := range append([][]byte{kek}, previous...) {
		if len(k) != KEKSize {
			if i == 0 {
				return nil, fmt.Errorf("keys: key-encryption key is %d bytes, want %d", len(k), KEKSize)
			}
			return nil, fmt.Errorf("keys: previous key-encryption key %d is %d bytes, want %d", i, len(k), KEKSize)
		}
		block, err := aes.NewCipher(k)
		if err != nil {
			return nil, fmt.Errorf("keys: %w", err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("keys: %w", err)
		}
		s.keys = append(s.keys, sealKey{id: kekID(k), aead: aead})
	}
	return s, nil
}

// kekID derives a KEK's id from the key: no configuration names keys, and
// the same key always has the same id on every replica.
func kekID(kek []byte) [kekIDSize]byte {
	h := sha256.New()
	h.Write([]byte("lectern/kek-id/v1"))
	h.Write(kek)
	var id [kekIDSize]byte
	copy(id[:], h.Sum(nil))
	return id
}

// KEKID returns the printable id of the KEK that seals (the current one).
func (s *Sealer) KEKID() string { return base64.RawURLEncoding.EncodeToString(s.keys[0].id[:]) }

// SealedKEKID returns the printable id of the KEK that sealed a blob, or
// "" for a version 1 blob (which names none) or a blob too short to tell.
func SealedKEKID(sealed []byte) string {
	if len(sealed) < 1+kekIDSize || sealed[0] != sealV2 {
		return ""
	}
	return base64.RawURLEncoding.EncodeToString(sealed[1 : 1+kekIDSize])
}

// Seal encrypts plaintext for the key kid of site under the current KEK.
func (s *Sealer) Seal(site tenant.ID, kid string, plaintext []byte) ([]byte, error) {
	k := &s.keys[0]
	head := 1 + kekIDSize + nonceSize
	out := make([]byte, head, head+len(plaintext)+tagSize)
	out[0] = sealV2
	copy(out[1:], k.id[:])
	if _, err := rand.Read(out[1+kekIDSize:]); err != nil {
		return nil, fmt.Errorf("keys: nonce: %w", err)
	}
	return k.aead.Seal(out, out[1+kekIDSize:head], plaintext, additionalData(sealV2, k.id[:], site, kid)), nil
}

// Open decrypts a blob that Seal produced for the same site and kid, under
// the current or a previous KEK. Any failure is ErrSealedKey (or an
// unknown-version error); which one of wrong KEK, tampering or relocation it
// was is deliberately not distinguishable.
func (s *Sealer) Open(site tenant.ID, kid string, sealed []byte) ([]byte, error) {
	if len(sealed) < 1 {
		return nil, fmt.Errorf("keys: %w: too short", ErrSealedKey)
	}
	switch sealed[0] {
	case sealV1:
		if len(sealed) < 1+nonceSize+tagSize {
			return nil, fmt.Errorf("keys: %w: too short", ErrSealedKey)
		}
		nonce, ct := sealed[1:1+nonceSize], sealed[1+nonceSize:]
		for _, k := range s.keys {
			if pt, err := k.aead.Open(nil, nonce, ct, additionalData(sealV1, nil, site, kid)); err == nil {
				return pt, nil
			}
		}
	case sealV2:
		if len(sealed) < 1+kekIDSize+nonceSize+tagSize {
			return nil, fmt.Errorf("keys: %w: too short", ErrSealedKey)
		}
		id := sealed[1 : 1+kekIDSize]
		nonce, ct := sealed[1+kekIDSize:1+kekIDSize+nonceSize], sealed[1+kekIDSize+nonceSize:]
		for _, k := range s.keys {
			if string(k.id[:]) != string(id) {
				continue
			}
			if pt, err := k.aead.Open(nil, nonce, ct, additionalData(sealV2, id, site, kid)); err == nil {
				return pt, nil
			}
		}
	default:
		return nil, fmt.Errorf("keys: sealed private key has unknown format version %d", sealed[0])
	}
	return nil, fmt.Errorf("keys: %w", ErrSealedKey)
}

// Current reports whether sealed was sealed under the current KEK: a
// re-sealing pass leaves such blobs alone.
func (s *Sealer) Current(sealed []byte) bool {
	return len(sealed) >= 1+kekIDSize && sealed[0] == sealV2 && string(sealed[1:1+kekIDSize]) == string(s.keys[0].id[:])
}

// additionalData is context || version || KEK id (version 2 only) ||
// site (8 bytes, big endian) || len(kid) (2 bytes) || kid. Every field but
// the last has a fixed length or a length prefix, so no two (site, kid)
// pairs encode alike.
func additionalData(version byte, kekID []byte, site tenant.ID, kid string) []byte {
	ad := make([]byte, 0, len(adContext)+1+len(kekID)+8+2+len(kid))
	ad = append(ad, adContext...)
	ad = append(ad, version)
	ad = append(ad, kekID...)
	ad = binary.BigEndian.AppendUint64(ad, uint64(site))
	ad = binary.BigEndian.AppendUint16(ad, uint16(len(kid)))
	return append(ad, kid...)
}
