package sqlstore

import (
	"bytes"
	"context"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

var _ storage.RotationStore = (*Store)(nil)

// DueSiteKeys implements storage.RotationStore: a range scan of the
// partial index site_keys_rotate_at.
func (s *Store) DueSiteKeys(ctx context.Context, now time.Time, limit int) ([]storage.SiteKey, error) {
	var keys []storage.SiteKey
	err := s.db.WithContext(ctx).Where("state = ? AND rotate_at <= ?", storage.KeyActive, now.UTC()).
		Order("rotate_at, id").Limit(limit).Find(&keys).Error
	return keys, mapErr(err)
}

// UnscheduledSiteKeys implements storage.RotationStore.
func (s *Store) UnscheduledSiteKeys(ctx context.Context, limit int) ([]storage.SiteKey, error) {
	var keys []storage.SiteKey
	err := s.db.WithContext(ctx).
		Where("state = ? AND rotate_at IS NULL", storage.KeyActive).
		Where("NOT EXISTS (SELECT 1 FROM site_keys AS n WHERE n.site_id = site_keys.site_id AND n.state = ?)", storage.KeyNext).
		Order("id").Limit(limit).Find(&keys).Error
	return keys, mapErr(err)
}

// PendingSiteKeys implements storage.RotationStore.
func (s *Store) PendingSiteKeys(ctx context.Context, now time.Time, limit int) ([]storage.SiteKey, error) {
	var keys []storage.SiteKey
	err := s.db.WithContext(ctx).Where("state = ? AND activates_at <= ?", storage.KeyNext, now.UTC()).
		Order("activates_at, id").Limit(limit).Find(&keys).Error
	return keys, mapErr(err)
}

// SetSiteKeyRotateAt implements storage.RotationStore.
func (s *Store) SetSiteKeyRotateAt(ctx context.Context, site tenant.ID, kid string, at *time.Time) error {
	var v any
	if at != nil {
		v = at.UTC()
	}
	res := s.db.WithContext(ctx).Model(&storage.SiteKey{}).Scopes(siteScope(site)).Where("kid = ?", kid).Update("rotate_at", v)
	if res.Error != nil {
		return mapErr(res.Error)
	}
	if res.RowsAffected == 0 {
		return storage.ErrNotFound
	}
	return nil
}

// StartRotation implements storage.RotationStore. On PostgreSQL the active
// key's row is locked (SKIP LOCKED: a replica that finds it locked leaves
// the site to whoever holds it); SQLite serializes writers anyway.
func (s *Store) StartRotation(ctx context.Context, site tenant.ID, kid string, now time.Time, next *storage.SiteKey) (bool, error) {
	started := false
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		q := tx.Scopes(siteScope(site)).Where("kid = ? AND state = ? AND rotate_at <= ?", kid, storage.KeyActive, now.UTC())
		if s.dialect == Postgres {
			q = q.Clauses(clause.Locking{Strength: "UPDATE", Options: "SKIP LOCKED"})
		}
		var cur []storage.SiteKey
		if err := q.Limit(1).Find(&cur).Error; err != nil || len(cur) == 0 {
			return err
		}
		var pending int64
		if err := tx.Model(&storage.SiteKey{}).Scopes(siteScope(site)).Where("state = ?", storage.KeyNext).Count(&pending).Error; err != nil || pending > 0 {
			return err
		}
		if err := tx.Model(&storage.SiteKey{}).Scopes(siteScope(site)).Where("kid = ?", kid).Update("rotate_at", nil).Error; err != nil {
			return err
		}
		next.CreatedAt, next.ActivatesAt = next.CreatedAt.UTC(), next.ActivatesAt.UTC()
		if next.RotateAt != nil {
			next.RotateAt = ptrUTC(*next.RotateAt)
		}
		if err := tx.Create(next).Error; err != nil {
			return err
		}
		started = true
		return nil
	})
	return started, mapErr(err)
}

// AcquireLease implements storage.RotationStore: one conditional UPDATE,
// and an INSERT the first time the lease is ever taken.
func (s *Store) AcquireLease(ctx context.Context, name, holder string, now time.Time, ttl time.Duration) (bool, error) {
	db := s.db.WithContext(ctx)
	until := now.Add(ttl).UTC()
	res := db.Model(&storage.Lease{}).Where("name = ? AND (holder = ? OR expires_at < ?)", name, holder, now.UTC()).
		Updates(map[string]any{"holder": holder, "expires_at": until})
	if res.Error != nil {
		return false, mapErr(res.Error)
	}
	if res.RowsAffected > 0 {
		return true, nil
	}
	res = db.Clauses(clause.OnConflict{DoNothing: true}).Create(&storage.Lease{Name: name, Holder: holder, ExpiresAt: until})
	if res.Error != nil {
		return false, mapErr(res.Error)
	}
	return res.RowsAffected > 0, nil
}

// ReleaseLease implements storage.RotationStore: the lease expires now,
// so the next holder need not wait for its TTL.
func (s *Store) ReleaseLease(ctx context.Context, name, holder string) error {
	err := s.db.WithContext(ctx).Model(&storage.Lease{}).Where("name = ? AND holder = ?", name, holder).
		Update("expires_at", time.Unix(0, 0).UTC()).Error
	return mapErr(err)
}

// AllSiteKeys implements storage.RotationStore. It crosses sites on
// purpose: re-sealing under a new key-encryption key concerns every row.
func (s *Store) AllSiteKeys(ctx context.Context, after int64, limit int) ([]storage.SiteKey, error) {
	var keys []storage.SiteKey
	err := s.db.WithContext(ctx).Where("id > ?", after).Order("id").Limit(limit).Find(&keys).Error
	return keys, mapErr(err)
}

// ResealSiteKey implements storage.RotationStore.
func (s *Store) ResealSiteKey(ctx context.Context, id int64, old, sealed []byte) (bool, error) {
	if bytes.Equal(old, sealed) {
		return false, nil
	}
	res := s.db.WithContext(ctx).Model(&storage.SiteKey{}).Where("id = ? AND sealed_private = ?", id, old).
		Update("sealed_private", sealed)
	return res.RowsAffected > 0, mapErr(res.Error)
}
