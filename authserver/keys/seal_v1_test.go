package keys

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"testing"
)

// Rows sealed before KEK ids (format version 1) still open, under the
// current KEK or a previous one, and are not current (a re-sealing pass
// rewrites them).
func TestOpenVersion1Blob(t *testing.T) {
	kek, other := make([]byte, KEKSize), make([]byte, KEKSize)
	_, _ = rand.Read(kek)
	_, _ = rand.Read(other)
	block, _ := aes.NewCipher(kek)
	aead, _ := cipher.NewGCM(block)
	plain := []byte("legacy private key")
	blob := make([]byte, 1+nonceSize)
	blob[0] = sealV1
	_, _ = rand.Read(blob[1:])
	blob = aead.Seal(blob, blob[1:], plain, additionalData(sealV1, nil, 9, "kid"))

	for name, s := range map[string]func() (*Sealer, error){
		"current":  func() (*Sealer, error) { return NewSealer(kek) },
		"previous": func() (*Sealer, error) { return NewSealer(other, kek) },
	} {
		sealer, err := s()
		if err != nil {
			t.Fatal(err)
		}
		got, err := sealer.Open(9, "kid", blob)
		if err != nil || !bytes.Equal(got, plain) {
			t.Errorf("%s: Open(v1) = %q, %v", name, got, err)
		}
		if sealer.Current(blob) {
			t.Errorf("%s: a version 1 blob counts as current", name)
		}
	}
	if s, _ := NewSealer(other); s != nil {
		if _, err := s.Open(9, "kid", blob); err == nil {
			t.Error("v1 blob opened under an unrelated KEK")
		}
	}
}
