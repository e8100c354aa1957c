package password

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Params are argon2id parameters.
type Params struct {
	Memory  uint32 // KiB
	Time    uint32
	Threads uint8
	KeyLen  uint32
	SaltLen uint32
}

// Default follows RFC 9106 §4's second recommended option, scaled to a
// sign-in budget of a few tens of milliseconds: 64 MiB, 3 passes.
var Default = Params{Memory: 64 * 1024, Time: 3, Threads: 2, KeyLen: 32, SaltLen: 16}

// ErrMismatch: the password does not match the hash.
var ErrMismatch = errors.New("password: mismatch")

// ErrMalformed: the stored hash is not an argon2id PHC string.
var ErrMalformed = errors.New("password: malformed hash")

// MaxLength bounds the password a user may present; longer input is
// refused before hashing so that it cannot be used to burn CPU.
const MaxLength = 1024

// Hash returns the PHC string of password under p.
func Hash(password string, p Params) (string, error) {
	if len(password) > MaxLength {
		return "", fmt.Errorf("password: longer than %d bytes", MaxLength)
	}
	salt := make([]byte, p.SaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	key := idKey([]byte(password), salt, p.Time, p.Memory, p.Threads, p.KeyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, p.Memory, p.Time, p.Threads,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key)), nil
}

// Verify reports whether password matches the PHC string encoded, in
// constant time with respect to the derived key. It returns ErrMismatch or
// ErrMalformed.
func Verify(password, encoded string) error {
	if len(password) > MaxLength {
		return ErrMismatch
	}
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return ErrMalformed
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return ErrMalformed
	}
	var p Params
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.Memory, &p.Time, &p.Threads); err != nil {
		return ErrMalformed
	}
	// Refuse absurd parameters from a tampered row rather than allocating them.
	if p.Memory == 0 || p.Memory > 1<<21 || p.Time == 0 || p.Time > 64 || p.Threads == 0 {
		return ErrMalformed
	}
	salt, err := base64.RawStdEncoding.DecodeString(parts[4])
	if err != nil || len(salt) < 8 {
		return ErrMalformed
	}
	want, err := base64.RawStdEncoding.DecodeString(parts[5])
	if err != nil || len(want) < 16 || len(want) > 128 {
		return ErrMalformed
	}
	got := idKey([]byte(password), salt, p.Time, p.Memory, p.Threads, uint32(len(want)))
	if subtle.ConstantTimeCompare(got, want) != 1 {
		return ErrMismatch
	}
	return nil
}
