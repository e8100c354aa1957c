package sqlstore

import (
	"context"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

var _ storage.AccountStore = (*Store)(nil)

// pendingInvitation narrows to invitations neither accepted nor revoked.
func pendingInvitation(db *gorm.DB) *gorm.DB {
	return db.Where("accepted_at IS NULL AND revoked_at IS NULL")
}

// CreateInvitation implements storage.AccountStore.
func (s *Store) CreateInvitation(ctx context.Context, inv *storage.Invitation, mail *storage.OutboxMessage) error {
	inv.Email = strings.ToLower(strings.TrimSpace(inv.Email))
	inv.CreatedAt = inv.CreatedAt.UTC()
	inv.SentAt, inv.ExpiresAt = inv.SentAt.UTC(), inv.ExpiresAt.UTC()
	return mapErr(s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(inv).Error; err != nil {
			return err
		}
		return enqueue(tx, mail)
	}))
}

// InvitationByID implements storage.AccountStore.
func (s *Store) InvitationByID(ctx context.Context, site tenant.ID, id int64) (*storage.Invitation, error) {
	var inv storage.Invitation
	if err := s.db.WithContext(ctx).Scopes(siteScope(site)).Take(&inv, "id = ?", id).Error; err != nil {
		return nil, mapErr(err)
	}
	return &inv, nil
}

// PendingInvitationByEmail implements storage.AccountStore.
func (s *Store) PendingInvitationByEmail(ctx context.Context, site tenant.ID, email string) (*storage.Invitation, error) {
	var inv storage.Invitation
	err := s.db.WithContext(ctx).Scopes(siteScope(site), pendingInvitation).
		Take(&inv, "email = ?", strings.ToLower(strings.TrimSpace(email))).Error
	if err != nil {
		return nil, mapErr(err)
	}
	return &inv, nil
}

// InvitationByTokenHash implements storage.AccountStore.
func (s *Store) InvitationByTokenHash(ctx context.Context, site tenant.ID, hash []byte) (*storage.Invitation, error) {
	var inv storage.Invitation
	if err := s.db.WithContext(ctx).Scopes(siteScope(site)).Take(&inv, "token_hash = ?", hash).Error; err != nil {
		return nil, mapErr(err)
	}
	return &inv, nil
}

// ListInvitations implements storage.AccountStore.
func (s *Store) ListInvitations(ctx context.Context, site tenant.ID, p storage.Page) ([]storage.Invitation, int, error) {
	var total int64
	base := func() *gorm.DB {
		return s.db.WithContext(ctx).Model(&storage.Invitation{}).Scopes(siteScope(site), pendingInvitation)
	}
	if err := base().Count(&total).Error; err != nil {
		return nil, 0, mapErr(err)
	}
	var out []storage.Invitation
	q := base().Where("id > ?", p.After).Order("id")
	if p.Limit > 0 {
		q = q.Limit(p.Limit)
	}
	if err := q.Find(&out).Error; err != nil {
		return nil, 0, mapErr(err)
	}
	return out, int(total), nil
}

// RenewInvitation implements storage.AccountStore.
func (s *Store) RenewInvitation(ctx context.Context, site tenant.ID, id int64, u storage.InvitationUpdate, mail *storage.OutboxMessage) (*storage.Invitation, error) {
	var inv storage.Invitation
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Model(&storage.Invitation{}).Scopes(siteScope(site), pendingInvitation).Where("id = ?", id).
			Updates(map[string]any{"token_hash": u.TokenHash, "role": u.Role, "invited_by": u.InvitedBy,
				"sent_at": u.SentAt.UTC(), "expires_at": u.ExpiresAt.UTC()})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return storage.ErrNotFound
		}
		if err := tx.Scopes(siteScope(site)).Take(&inv, "id = ?", id).Error; err != nil {
			return err
		}
		return enqueue(tx, mail)
	})
	if err != nil {
		return nil, mapErr(err)
	}
	return &inv, nil
}

// RevokeInvitation implements storage.AccountStore.
func (s *Store) RevokeInvitation(ctx context.Context, site tenant.ID, id int64, at time.Time) error {
	res := s.db.WithContext(ctx).Model(&storage.Invitation{}).Scopes(siteScope(site), pendingInvitation).
		Where("id = ?", id).Update("revoked_at", at.UTC())
	if res.Error != nil {
		return mapErr(res.Error)
	}
	if res.RowsAffected == 0 {
		return storage.ErrNotFound
	}
	return nil
}

// AcceptInvitation implements storage.AccountStore. The conditional update
// decides a race between two accepting browsers: one wins, the other is
// ErrNotFound and changes nothing.
func (s *Store) AcceptInvitation(ctx context.Context, site tenant.ID, id int64, userID string, newUser *storage.User, at time.Time) error {
	at = at.UTC()
	return mapErr(s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var inv storage.Invitation
		if err := tx.Scopes(siteScope(site)).Take(&inv, "id = ?", id).Error; err != nil {
			return err
		}
		res := tx.Model(&storage.Invitation{}).Scopes(siteScope(site), pendingInvitation).
			Where("id = ? AND expires_at > ?", id, at).
			Updates(map[string]any{"accepted_at": at, "accepted_by": userID})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return storage.ErrNotFound
		}
		if newUser != nil {
			newUser.Email = strings.ToLower(strings.TrimSpace(newUser.Email))
			newUser.CreatedAt, newUser.UpdatedAt, newUser.EmailVerified = at, at, true
			if err := tx.Create(newUser).Error; err != nil {
				return err
			}
		}
		if err := grantRole(tx, site, userID, inv.Role, at); err != nil {
			return err
		}
		return markVerified(tx, userID, inv.Email, at)
	}))
}

// markVerified marks the account's address verified, if it is still the
// address the link went to.
func markVerified(tx *gorm.DB, userID, email string, at time.Time) error {
	return tx.Model(&storage.User{}).Where("id = ? AND email = ?", userID, strings.ToLower(email)).
		Updates(map[string]any{"email_verified": true, "updated_at": at}).Error
}

func grantRole(tx *gorm.DB, site tenant.ID, userID, role string, at time.Time) error {
	var n int64
	if err := tx.Model(&storage.SiteRole{}).Scopes(siteScope(site)).
		Where("user_id = ? AND role = ?", userID, role).Count(&n).Error; err != nil || n > 0 {
		return err
	}
	return tx.Create(&storage.SiteRole{SiteID: site, UserID: userID, Role: role, CreatedAt: at}).Error
}

// CreateAccountToken implements storage.AccountStore.
func (s *Store) CreateAccountToken(ctx context.Context, t *storage.AccountToken, mail *storage.OutboxMessage) error {
	t.Email = strings.ToLower(strings.TrimSpace(t.Email))
	t.CreatedAt, t.ExpiresAt = t.CreatedAt.UTC(), t.ExpiresAt.UTC()
	return mapErr(s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(t).Error; err != nil {
			return err
		}
		return enqueue(tx, mail)
	}))
}

// AccountTokenByHash implements storage.AccountStore.
func (s *Store) AccountTokenByHash(ctx context.Context, purpose string, hash []byte) (*storage.AccountToken, error) {
	var t storage.AccountToken
	if err := s.db.WithContext(ctx).Take(&t, "purpose = ? AND token_hash = ?", purpose, hash).Error; err != nil {
		return nil, mapErr(err)
	}
	return &t, nil
}

// useToken marks the token used if it is unused and unexpired at at, and
// returns it; otherwise ErrNotFound. Of two concurrent uses one wins.
func useToken(tx *gorm.DB, id int64, purpose string, at time.Time) (*storage.AccountToken, error) {
	res := tx.Model(&storage.AccountToken{}).
		Where("id = ? AND purpose = ? AND used_at IS NULL AND expires_at > ?", id, purpose, at).
		Update("used_at", at)
	if res.Error != nil {
		return nil, res.Error
	}
	if res.RowsAffected == 0 {
		return nil, storage.ErrNotFound
	}
	var t storage.AccountToken
	if err := tx.Take(&t, "id = ?", id).Error; err != nil {
		return nil, err
	}
	return &t, nil
}

// ResetPassword implements storage.AccountStore.
func (s *Store) ResetPassword(ctx context.Context, tokenID int64, userID, passwordHash string, at time.Time) error {
	at = at.UTC()
	return mapErr(s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		t, err := useToken(tx, tokenID, storage.TokenPasswordReset, at)
		if err != nil {
			return err
		}
		if t.UserID != userID {
			return storage.ErrNotFound
		}
		res := tx.Model(&storage.User{}).Where("id = ?", userID).
			Updates(map[string]any{"password_hash": passwordHash, "updated_at": at})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return storage.ErrNotFound
		}
		if err := markVerified(tx, userID, t.Email, at); err != nil {
			return err
		}
		// Every other reset link of the account dies with this one, and so
		// does every pending e-mail change: it was asked for with the old
		// password, and confirming it needs only the link, so whoever knew
		// that password could otherwise move the account to an address of
		// theirs after the reset and reset it again from there.
		return tx.Model(&storage.AccountToken{}).
			Where("user_id = ? AND purpose IN ? AND used_at IS NULL", userID,
				[]string{storage.TokenPasswordReset, storage.TokenEmailChange}).
			Update("used_at", at).Error
	}))
}

// CompleteSignUp implements storage.AccountStore.
func (s *Store) CompleteSignUp(ctx context.Context, tokenID int64, u *storage.User, role string, at time.Time) error {
	at = at.UTC()
	return mapErr(s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		t, err := useToken(tx, tokenID, storage.TokenSignUp, at)
		if err != nil {
			return err
		}
		u.Email = t.Email
		u.CreatedAt, u.UpdatedAt, u.EmailVerified = at, at, true
		if err := tx.Create(u).Error; err != nil {
			return err
		}
		return grantRole(tx, t.SiteID, u.ID, role, at)
	}))
}

// ChangeEmail implements storage.AccountStore.
func (s *Store) ChangeEmail(ctx context.Context, tokenID int64, userID, email string, at time.Time) error {
	at = at.UTC()
	return mapErr(s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		t, err := useToken(tx, tokenID, storage.TokenEmailChange, at)
		if err != nil {
			return err
		}
		if t.UserID != userID || t.Email != strings.ToLower(strings.TrimSpace(email)) {
			return storage.ErrNotFound
		}
		res := tx.Model(&storage.User{}).Where("id = ?", userID).
			Updates(map[string]any{"email": t.Email, "email_verified": true, "updated_at": at})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return storage.ErrNotFound
		}
		return nil
	}))
}

// UserGrants implements storage.AccountStore. Like SitesOfUser it crosses
// sites by design: a person's password is platform-wide.
func (s *Store) UserGrants(ctx context.Context, userID string, at time.Time) ([]storage.Grant, error) {
	var gs []storage.Grant
	err := s.db.WithContext(ctx).Where("user_id = ? AND revoked_at IS NULL AND expires_at > ?", userID, at.UTC()).
		Order("site_id, id").Find(&gs).Error
	return gs, mapErr(err)
}
