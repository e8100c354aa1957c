package authserver

import (
	"crypto/rand"
	"encoding/base64"
)

// randomToken returns 256 random bits, base64url (43 characters): codes,
// refresh tokens, authorization request IDs.
func randomToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// randomID returns 128 random bits, base64url (22 characters).
func randomID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}
