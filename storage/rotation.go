package storage

import (
	"context"
	"time"

	"github.com/lectern/lectern/tenant"
)

// RotationStore is what scheduled key rotation and key-encryption-key
// rotation need beyond KeyStore: due keys found by index, a rotation that
// starts in one transaction, leases, and re-sealing in place.
type RotationStore interface {
	KeyStore
	// DueSiteKeys returns up to limit active keys whose RotateAt is at or
	// before now, soonest first.
	DueSiteKeys(ctx context.Context, now time.Time, limit int) ([]SiteKey, error)
	// UnscheduledSiteKeys returns up to limit active keys without RotateAt
	// whose site has no pending (next) key: keys made before scheduling.
	UnscheduledSiteKeys(ctx context.Context, limit int) ([]SiteKey, error)
	// PendingSiteKeys returns up to limit next keys whose activation is at
	// or before now: transitions no replica has persisted yet.
	PendingSiteKeys(ctx context.Context, now time.Time, limit int) ([]SiteKey, error)
	// SetSiteKeyRotateAt sets (or, with nil, clears) a key's RotateAt.
	SetSiteKeyRotateAt(ctx context.Context, site tenant.ID, kid string, at *time.Time) error
	// StartRotation inserts next for site and clears RotateAt of the
	// active key kid, in one transaction, if that key is still active, due
	// at now and the site has no pending key; otherwise it changes nothing
	// and returns false. Concurrent calls for one site start one rotation.
	StartRotation(ctx context.Context, site tenant.ID, kid string, now time.Time, next *SiteKey) (bool, error)
	// AcquireLease takes or renews the lease name for holder until
	// now+ttl, if it is free, expired or already holder's.
	AcquireLease(ctx context.Context, name, holder string, now time.Time, ttl time.Duration) (bool, error)
	// ReleaseLease gives up holder's lease name (nothing if another holds it).
	ReleaseLease(ctx context.Context, name, holder string) error
	// AllSiteKeys returns up to limit keys of every site with ID > after, in
	// ID order: the pages of a re-sealing pass.
	AllSiteKeys(ctx context.Context, after int64, limit int) ([]SiteKey, error)
	// ResealSiteKey replaces a key's sealed private key if it is still
	// old (compare-and-swap); false when another writer changed it first.
	ResealSiteKey(ctx context.Context, id int64, old, sealed []byte) (bool, error)
}
