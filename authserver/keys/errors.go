package keys

import (
	"errors"
	"fmt"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

var (
	// ErrUnknownKey means the site publishes no key with that kid.
	ErrUnknownKey = errors.New("keys: unknown key id")
	// ErrNoSigningKey means the site's ring has no active key (no ring was
	// created for it, or only a "next" key that has not activated yet).
	ErrNoSigningKey = errors.New("keys: site has no active signing key")
	// ErrRingExists is returned by CreateRing for a site that already has an
	// active or next key. It wraps storage.ErrConflict.
	ErrRingExists = fmt.Errorf("keys: site already has a key ring: %w", storage.ErrConflict)
)

// CorruptKeyError reports a stored key that cannot be used: its sealed
// private key does not open (wrong key-encryption key, altered or moved
// row), or its public JWK or PKCS #8 document does not parse. It concerns one
// site only; the edge answers 503 for that site and logs Site and KID.
// Err never carries key material.
type CorruptKeyError struct {
	Site tenant.ID
	KID  string
	Err  error
}

func (e *CorruptKeyError) Error() string {
	return fmt.Sprintf("keys: site %d: key %q is unusable: %v", e.Site, e.KID, e.Err)
}

func (e *CorruptKeyError) Unwrap() error { return e.Err }
