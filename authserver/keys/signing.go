package keys

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sync"

	"golang.org/x/crypto/cryptobyte"
	"golang.org/x/crypto/cryptobyte/asn1"
)

// SigningKey is a site's active key, opened. Its fields are shared between
// goroutines and must be treated as read-only; the private key must never
// be logged or serialized.
type SigningKey struct {
	KID     string
	Private *ecdsa.PrivateKey
	Public  *ecdsa.PublicKey

	mu      sync.RWMutex
	headers map[string]string // base64url of the protected header, by typ
}

// Sign returns payload as a JWS in compact serialization (RFC 7515 §7.1),
// signed with ES256, with the protected header alg, kid and, unless typ is
// empty, typ ("at+jwt" for RFC 9068 access tokens, "JWT" for id_tokens).
//
// It writes the JWS itself rather than through go-jose's signer: the
// header is encoded once per key and typ, and the signature (RFC 7518
// §3.4: R and S as 32 bytes each) goes straight into the output. go-jose's
// generic signer marshalled the header map and built the serialization on
// every call (125 allocations; now a handful). Tokens are checked against
// go-jose's parser in the tests.
//
// The signature is deterministic (RFC 6979: the nonce is derived from the
// key and the digest with HMAC-SHA-256) rather than hedged with fresh
// randomness: no nonce can repeat for different tokens and none depends on
// the random source, and it costs about a fifth less per signature (two
// per code exchange; BenchmarkSign). Every token's payload differs (jti,
// iat), so no two tokens share a signature either.
func (k *SigningKey) Sign(payload []byte, typ string) (string, error) {
	header := k.header(typ)
	enc := base64.RawURLEncoding
	n := len(header) + 1 + enc.EncodedLen(len(payload))
	buf := make([]byte, n, n+1+enc.EncodedLen(64))
	copy(buf, header)
	buf[len(header)] = '.'
	enc.Encode(buf[len(header)+1:], payload)
	digest := sha256.Sum256(buf)
	der, err := k.Private.Sign(nil, digest[:], crypto.SHA256)
	if err != nil {
		return "", fmt.Errorf("keys: sign with %q: %w", k.KID, err)
	}
	var sig [64]byte
	if !rawSignature(der, &sig) {
		return "", fmt.Errorf("keys: sign with %q: malformed signature", k.KID)
	}
	buf = append(buf, '.')
	buf = enc.AppendEncode(buf, sig[:])
	return string(buf), nil
}

// rawSignature converts an ASN.1 ECDSA-Sig-Value into R || S, 32 bytes
// each (RFC 7518 §3.4).
func rawSignature(der []byte, out *[64]byte) bool {
	var seq, r, s cryptobyte.String
	in := cryptobyte.String(der)
	if !in.ReadASN1(&seq, asn1.SEQUENCE) || !in.Empty() ||
		!seq.ReadASN1(&r, asn1.INTEGER) || !seq.ReadASN1(&s, asn1.INTEGER) || !seq.Empty() {
		return false
	}
	return fixed32(r, out[:32]) && fixed32(s, out[32:])
}

// fixed32 writes a positive ASN.1 INTEGER's big-endian bytes right-aligned
// into dst (32 bytes).
func fixed32(v []byte, dst []byte) bool {
	for len(v) > 0 && v[0] == 0 {
		v = v[1:]
	}
	if len(v) > 32 {
		return false
	}
	copy(dst[32-len(v):], v)
	return true
}

// header returns the encoded protected header for typ, the members in
// go-jose's order (alg, kid, typ).
func (k *SigningKey) header(typ string) string {
	k.mu.RLock()
	h, ok := k.headers[typ]
	k.mu.RUnlock()
	if ok {
		return h
	}
	kid, _ := json.Marshal(k.KID)
	raw := `{"alg":"` + Alg + `","kid":` + string(kid)
	if typ != "" {
		t, _ := json.Marshal(typ)
		raw += `,"typ":` + string(t)
	}
	raw += "}"
	h = base64.RawURLEncoding.EncodeToString([]byte(raw))
	k.mu.Lock()
	if k.headers == nil {
		k.headers = make(map[string]string)
	}
	k.headers[typ] = h
	k.mu.Unlock()
	return h
}
