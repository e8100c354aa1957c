package sqlstore

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

var (
	_ storage.FactorStore        = (*Store)(nil)
	_ storage.FactorSupportStore = (*Store)(nil)
)

// CreatePasskey implements storage.FactorStore.
func (s *Store) CreatePasskey(ctx context.Context, p *storage.Passkey) error {
	p.CreatedAt = p.CreatedAt.UTC()
	return mapErr(s.db.WithContext(ctx).Create(p).Error)
}

// Passkeys implements storage.FactorStore.
func (s *Store) Passkeys(ctx context.Context, site tenant.ID, userID string) ([]storage.Passkey, error) {
	var out []storage.Passkey
	err := s.db.WithContext(ctx).Scopes(siteScope(site)).Where("user_id = ?", userID).Order("id").Find(&out).Error
	return out, mapErr(err)
}

// CountPasskeys implements storage.FactorStore: by user alone (the
// passkeys_user index leads with user_id).
func (s *Store) CountPasskeys(ctx context.Context, userID string) (int, error) {
	var n int64
	err := s.db.WithContext(ctx).Model(&storage.Passkey{}).Where("user_id = ?", userID).Count(&n).Error
	return int(n), mapErr(err)
}

// AllPasskeys implements storage.FactorSupportStore: by user alone, as
// CountPasskeys.
func (s *Store) AllPasskeys(ctx context.Context, userID string) ([]storage.Passkey, error) {
	var out []storage.Passkey
	err := s.db.WithContext(ctx).Where("user_id = ?", userID).Order("site_id, id").Find(&out).Error
	return out, mapErr(err)
}

// PasskeyByCredentialID implements storage.FactorStore.
func (s *Store) PasskeyByCredentialID(ctx context.Context, site tenant.ID, credentialID []byte) (*storage.Passkey, error) {
	var p storage.Passkey
	if err := s.db.WithContext(ctx).Scopes(siteScope(site)).Take(&p, "credential_id = ?", credentialID).Error; err != nil {
		return nil, mapErr(err)
	}
	return &p, nil
}

// PasskeyUsed implements storage.FactorStore.
func (s *Store) PasskeyUsed(ctx context.Context, site tenant.ID, id int64, data string, at time.Time) error {
	res := s.db.WithContext(ctx).Model(&storage.Passkey{}).Scopes(siteScope(site)).Where("id = ?", id).
		Updates(map[string]any{"data": data, "last_used_at": at.UTC()})
	return affected(res)
}

// RenamePasskey implements storage.FactorStore.
func (s *Store) RenamePasskey(ctx context.Context, site tenant.ID, userID string, id int64, name string) error {
	res := s.db.WithContext(ctx).Model(&storage.Passkey{}).Scopes(siteScope(site)).
		Where("id = ? AND user_id = ?", id, userID).Update("name", name)
	return affected(res)
}

// DeletePasskey implements storage.FactorStore.
func (s *Store) DeletePasskey(ctx context.Context, site tenant.ID, userID string, id int64) error {
	res := s.db.WithContext(ctx).Scopes(siteScope(site)).Where("id = ? AND user_id = ?", id, userID).Delete(&storage.Passkey{})
	return affected(res)
}

// affected maps an update or delete that matched no row to ErrNotFound.
func affected(res *gorm.DB) error {
	if res.Error != nil {
		return mapErr(res.Error)
	}
	if res.RowsAffected == 0 {
		return storage.ErrNotFound
	}
	return nil
}

// TOTPOf implements storage.FactorStore.
func (s *Store) TOTPOf(ctx context.Context, userID string) (*storage.TOTP, error) {
	var t storage.TOTP
	if err := s.db.WithContext(ctx).Take(&t, "user_id = ?", userID).Error; err != nil {
		return nil, mapErr(err)
	}
	return &t, nil
}

// EnableTOTP implements storage.FactorStore.
func (s *Store) EnableTOTP(ctx context.Context, t *storage.TOTP, codeHashes [][]byte) error {
	t.CreatedAt = t.CreatedAt.UTC()
	return mapErr(s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Where("user_id = ?", t.UserID).Delete(&storage.RecoveryCode{}).Error; err != nil {
			return err
		}
		if err := tx.Where("user_id = ?", t.UserID).Delete(&storage.TOTP{}).Error; err != nil {
			return err
		}
		if err := tx.Create(t).Error; err != nil {
			return err
		}
		for _, h := range codeHashes {
			if err := tx.Create(&storage.RecoveryCode{UserID: t.UserID, CodeHash: h}).Error; err != nil {
				return err
			}
		}
		return nil
	}))
}

// DisableTOTP implements storage.FactorStore.
func (s *Store) DisableTOTP(ctx context.Context, userID string) error {
	return mapErr(s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Where("user_id = ?", userID).Delete(&storage.RecoveryCode{}).Error; err != nil {
			return err
		}
		return tx.Where("user_id = ?", userID).Delete(&storage.TOTP{}).Error
	}))
}

// UseTOTPStep implements storage.FactorStore: one conditional update, so
// two requests with the same code cannot both succeed.
func (s *Store) UseTOTPStep(ctx context.Context, userID string, step int64) (bool, error) {
	res := s.db.WithContext(ctx).Model(&storage.TOTP{}).Where("user_id = ? AND last_step < ?", userID, step).Update("last_step", step)
	if res.Error != nil {
		return false, mapErr(res.Error)
	}
	return res.RowsAffected == 1, nil
}

// UseRecoveryCode implements storage.FactorStore.
func (s *Store) UseRecoveryCode(ctx context.Context, userID string, codeHash []byte, at time.Time) (bool, error) {
	res := s.db.WithContext(ctx).Model(&storage.RecoveryCode{}).
		Where("user_id = ? AND code_hash = ? AND used_at IS NULL", userID, codeHash).Update("used_at", at.UTC())
	if res.Error != nil {
		return false, mapErr(res.Error)
	}
	return res.RowsAffected == 1, nil
}

// RecoveryCodesLeft implements storage.FactorStore.
func (s *Store) RecoveryCodesLeft(ctx context.Context, userID string) (int, error) {
	var n int64
	err := s.db.WithContext(ctx).Model(&storage.RecoveryCode{}).Where("user_id = ? AND used_at IS NULL", userID).Count(&n).Error
	return int(n), mapErr(err)
}
