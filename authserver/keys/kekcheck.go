package keys

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lectern/lectern/tenant"
)

// ErrWrongKEK: none of the configured key-encryption keys sealed the keys
// of a site's ring. A key sealed under such a KEK would not open on the
// replicas that hold the right one, and the site would stop signing.
var ErrWrongKEK = errors.New("keys: the configured key-encryption keys did not seal this site's keys")

// CheckKEK verifies that the configured key-encryption keys are the ones
// that sealed site's ring: some stored key of the site opens, or names a
// configured KEK by its id. A key sealed under a configured KEK that does
// not open (altered or moved) does not make the KEK wrong: rotating is the
// repair then. A site without keys passes.
func (m *Manager) CheckKEK(ctx context.Context, site tenant.ID) error {
	rows, err := m.store.SiteKeys(ctx, site, time.Now())
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return nil
	}
	var sealedUnder []string
	for _, k := range rows {
		if len(k.SealedPrivate) == 0 {
			continue
		}
		if _, err := m.sealer.Open(site, k.KID, k.SealedPrivate); err == nil || m.sealer.knows(k.SealedPrivate) {
			return nil
		}
		if id := SealedKEKID(k.SealedPrivate); id != "" {
			sealedUnder = append(sealedUnder, id)
		}
	}
	return fmt.Errorf("%w: site %d: its keys are sealed under key-encryption key %v, this process has %s (check LECTERN_KEK, or give the old key as LECTERN_KEK_PREVIOUS)",
		ErrWrongKEK, site, sealedUnder, m.sealer.KEKID())
}

// knows reports whether sealed names one of the configured KEKs.
func (s *Sealer) knows(sealed []byte) bool {
	if len(sealed) < 1+kekIDSize || sealed[0] != sealV2 {
		return false
	}
	for _, k := range s.keys {
		if string(k.id[:]) == string(sealed[1:1+kekIDSize]) {
			return true
		}
	}
	return false
}
