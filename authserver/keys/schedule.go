package keys

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// DefaultRotationPeriod is how long a key signs before the scheduler
// replaces it (Options.RotationPeriod).
const DefaultRotationPeriod = 90 * 24 * time.Hour

// jitterFraction: a site's rotation falls up to a tenth of its period
// before or after activation + period, at a place fixed by its id. Sites
// created together (a bulk import) rotate over a fifth of the period rather
// than in one night.
const jitterFraction = 10

// siteSpread is a number in [0, 1) fixed by the site id: the same on every
// replica and at every rotation of the site.
func siteSpread(site tenant.ID) float64 {
	// splitmix64's finalizer: consecutive ids (a bulk import) land far
	// apart.
	z := uint64(site) + 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	return float64(z>>11) / (1 << 53)
}

// RotationDue is when a key of site that activated at activatesAt is due
// for replacement under period: activatesAt + period ± period/10, the
// offset derived from the site id.
func RotationDue(site tenant.ID, activatesAt time.Time, period time.Duration) time.Time {
	j := period / jitterFraction
	return activatesAt.Add(period - j + time.Duration(siteSpread(site)*float64(2*j)))
}

// rotationStore is the store as the rotation code needs it.
func (m *Manager) rotationStore() (storage.RotationStore, error) {
	rs, ok := m.store.(storage.RotationStore)
	if !ok {
		return nil, errors.New("keys: the store does not support scheduled rotation")
	}
	return rs, nil
}

// RotationPeriod is the platform's rotation period (Options.RotationPeriod).
func (m *Manager) RotationPeriod() time.Duration { return m.period }

// Reschedule sets when the site's active key rotates for a new period (a
// changed site setting): its activation + period ± the site's jitter, but
// never in the past, so shortening a period does not rotate at once.
// A site whose rotation has started already is left as it is.
func (m *Manager) Reschedule(ctx context.Context, site tenant.ID, period time.Duration) error {
	rs, err := m.rotationStore()
	if err != nil {
		return err
	}
	rows, err := rs.SiteKeys(ctx, site, time.Now())
	if err != nil {
		return err
	}
	for _, k := range rows {
		if k.State == storage.KeyNext {
			return nil
		}
	}
	for _, k := range rows {
		if k.State != storage.KeyActive || k.RotateAt == nil {
			continue
		}
		at := notBefore(site, RotationDue(site, k.ActivatesAt, period), time.Now(), period)
		if err := rs.SetSiteKeyRotateAt(ctx, site, k.KID, &at); err != nil {
			return fmt.Errorf("keys: site %d: reschedule: %w", site, err)
		}
	}
	return nil
}

// notBefore moves a due time in the past to a spread point of the next
// tenth of the period: keys made before scheduling existed, or a period
// shortened below their age, rotate within days rather than all at once.
func notBefore(site tenant.ID, due, now time.Time, period time.Duration) time.Time {
	if !due.Before(now) {
		return due
	}
	return now.Add(time.Duration(siteSpread(site) * float64(period/jitterFraction)))
}

// KeyStatus is one site's rotation state, for `lectern keys status`.
type KeyStatus struct {
	Site tenant.ID `json:"site_id"`
	KID  string    `json:"kid"`
	// KEKID names the key-encryption key that sealed the private key ("":
	// a row sealed before KEK ids).
	KEKID       string     `json:"kek_id"`
	ActivatedAt time.Time  `json:"activated_at"`
	RotateAt    *time.Time `json:"rotate_at"`
	// Pending is the next key's kid and activation, when a rotation is
	// under way.
	Pending          string     `json:"pending_kid,omitempty"`
	PendingActivates *time.Time `json:"pending_activates_at,omitempty"`
}

// Status returns the rotation state of site: its active key, when it is
// due, and a pending key.
func (m *Manager) Status(ctx context.Context, site tenant.ID) (*KeyStatus, error) {
	rows, err := m.store.SiteKeys(ctx, site, time.Now())
	if err != nil {
		return nil, err
	}
	st := &KeyStatus{Site: site}
	p := resolve(rows, time.Now(), m.retain)
	if p.signer != nil {
		st.KID, st.ActivatedAt, st.RotateAt = p.signer.KID, p.signer.ActivatesAt, p.signer.RotateAt
		st.KEKID = SealedKEKID(p.signer.SealedPrivate)
	}
	for _, k := range rows {
		if k.State == storage.KeyNext && k.ActivatesAt.After(time.Now()) {
			at := k.ActivatesAt
			st.Pending, st.PendingActivates = k.KID, &at
		}
	}
	return st, nil
}

// ResealReport is what a re-sealing pass did.
type ResealReport struct {
	KEKID      string `json:"kek_id"`
	Resealed   int    `json:"resealed"`
	Current    int    `json:"already_current"`
	Unopenable int    `json:"unopenable"`
}

// Reseal re-seals every stored private key that is not sealed under the
// current key-encryption key (`lectern kek rotate`). Each row is swapped
// only if unchanged since it was read, so it can run beside serving
// replicas, and again after an interruption: rows done stay done. A row no
// configured KEK opens is counted and left alone.
func (m *Manager) Reseal(ctx context.Context) (ResealReport, error) {
	rep := ResealReport{KEKID: m.sealer.KEKID()}
	rs, err := m.rotationStore()
	if err != nil {
		return rep, err
	}
	var after int64
	for {
		page, err := rs.AllSiteKeys(ctx, after, 500)
		if err != nil {
			return rep, err
		}
		for _, k := range page {
			after = k.ID
			if m.sealer.Current(k.SealedPrivate) {
				rep.Current++
				continue
			}
			der, err := m.sealer.Open(k.SiteID, k.KID, k.SealedPrivate)
			if err != nil {
				rep.Unopenable++
				m.log.LogAttrs(ctx, slog.LevelWarn, "key does not open under any configured KEK; left as it is",
					logSite(k.SiteID), logKID(k.KID))
				continue
			}
			sealed, err := m.sealer.Seal(k.SiteID, k.KID, der)
			clear(der)
			if err != nil {
				return rep, err
			}
			ok, err := rs.ResealSiteKey(ctx, k.ID, k.SealedPrivate, sealed)
			if err != nil {
				return rep, err
			}
			if ok {
				rep.Resealed++
				m.Invalidate(k.SiteID)
			}
		}
		if len(page) < 500 {
			return rep, nil
		}
	}
}

func logSite(site tenant.ID) slog.Attr { return slog.Int64("site", int64(site)) }
func logKID(kid string) slog.Attr      { return slog.String("kid", kid) }
