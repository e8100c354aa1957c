package sqlstore

import (
	"context"
	"time"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// CreateSiteKey implements storage.KeyStore.
func (s *Store) CreateSiteKey(ctx context.Context, key *storage.SiteKey) error {
	if key.CreatedAt.IsZero() {
		key.CreatedAt = time.Now()
	}
	// UTC throughout: SQLite compares times as text (see CreateGrant).
	key.CreatedAt, key.ActivatesAt = key.CreatedAt.UTC(), key.ActivatesAt.UTC()
	if key.RetiredAt != nil {
		key.RetiredAt = ptrUTC(*key.RetiredAt)
	}
	if key.RotateAt != nil {
		key.RotateAt = ptrUTC(*key.RotateAt)
	}
	return mapErr(s.db.WithContext(ctx).Create(key).Error)
}

// SiteKeys implements storage.KeyStore.
func (s *Store) SiteKeys(ctx context.Context, site tenant.ID, retiredAfter time.Time) ([]storage.SiteKey, error) {
	var keys []storage.SiteKey
	err := s.db.WithContext(ctx).Scopes(siteScope(site)).
		Where("retired_at IS NULL OR retired_at > ?", retiredAfter.UTC()).
		Order("created_at DESC, id DESC").Find(&keys).Error
	return keys, mapErr(err)
}

// SetSiteKeyState implements storage.KeyStore.
func (s *Store) SetSiteKeyState(ctx context.Context, site tenant.ID, kid, state string, at time.Time) error {
	upd := map[string]any{"state": state}
	if state == storage.KeyRetired {
		upd["retired_at"] = at.UTC()
	}
	if state == storage.KeyActive {
		upd["activates_at"] = at.UTC()
	}
	res := s.db.WithContext(ctx).Model(&storage.SiteKey{}).Scopes(siteScope(site)).Where("kid = ?", kid).Updates(upd)
	if res.Error != nil {
		return mapErr(res.Error)
	}
	if res.RowsAffected == 0 {
		return storage.ErrNotFound
	}
	return nil
}
