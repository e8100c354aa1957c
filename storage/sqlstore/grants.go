package sqlstore

import (
	"context"
	"slices"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// CreateGrant implements storage.GrantStore.
func (s *Store) CreateGrant(ctx context.Context, g *storage.Grant, rt *storage.RefreshToken, audit ...*storage.AuditEvent) error {
	if g.Scopes == nil {
		g.Scopes = []string{}
	}
	// SQLite keeps times as text in the zone they were written in and
	// compares them as text; only UTC everywhere makes that order time order.
	g.AuthTime, g.CreatedAt, g.ExpiresAt, g.LastUsedAt = g.AuthTime.UTC(), g.CreatedAt.UTC(), g.ExpiresAt.UTC(), g.LastUsedAt.UTC()
	if g.RevokedAt != nil {
		g.RevokedAt = ptrUTC(*g.RevokedAt)
	}
	utcToken(rt)
	rt.SiteID, rt.GrantID = g.SiteID, g.ID
	for _, e := range audit {
		normalizeAudit(e)
	}
	if s.dialect == Postgres && len(audit) <= 1 {
		_, err := s.grants.do(ctx, grantReq{g: g, rt: rt, audit: audit})
		return mapErr(err)
	}
	return mapErr(s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(g).Error; err != nil {
			return err
		}
		if err := tx.Create(rt).Error; err != nil {
			return err
		}
		for _, e := range audit {
			if err := tx.Create(e).Error; err != nil {
				return err
			}
		}
		return nil
	}))
}

// GrantByID implements storage.GrantStore.
func (s *Store) GrantByID(ctx context.Context, site tenant.ID, id string) (*storage.Grant, error) {
	var g storage.Grant
	if err := s.db.WithContext(ctx).Scopes(siteScope(site)).Take(&g, "id = ?", id).Error; err != nil {
		return nil, mapErr(err)
	}
	return &g, nil
}

// RotateRefreshToken implements storage.GrantStore. The conditional UPDATE
// is the decision: of two requests presenting the same token, exactly one
// matches "used_at IS NULL"; the other finds it used and revokes the grant.
//
// Every writer of a grant's state (rotation, reuse, RevokeGrant) locks the
// grant row before any of its tokens. On PostgreSQL a request that waited for
// the token row keeps its lock on it even when the row no longer matches; if
// it then reached for the grant while another request held the grant and
// reached for the token, the two would deadlock.
func (s *Store) RotateRefreshToken(ctx context.Context, site tenant.ID, oldHash []byte, next *storage.RefreshToken, now time.Time) (*storage.Grant, error) {
	now = now.UTC()
	if s.dialect == Postgres {
		g, err := s.rotations.do(ctx, rotateReq{site: site, oldHash: oldHash, next: next, now: now})
		if err != nil || g != nil {
			return g, mapErr(err)
		}
		// Not rotated: unknown, expired, revoked or reused. The general path
		// below tells which, and revokes the grant on reuse.
	}
	var (
		grant  storage.Grant
		reused bool
	)
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var rt storage.RefreshToken
		if err := tx.Scopes(siteScope(site)).Take(&rt, "token_hash = ?", oldHash).Error; err != nil {
			return err
		}
		if err := tx.Clauses(clause.Locking{Strength: clause.LockingStrengthUpdate}).Scopes(siteScope(site)).
			Take(&grant, "id = ?", rt.GrantID).Error; err != nil {
			return err
		}
		res := tx.Model(&storage.RefreshToken{}).Scopes(siteScope(site)).
			Where("token_hash = ? AND used_at IS NULL AND revoked_at IS NULL AND expires_at > ?", oldHash, now).
			Update("used_at", now)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			// Read again: the token may have been used while we waited for the grant.
			if err := tx.Scopes(siteScope(site)).Take(&rt, "token_hash = ?", oldHash).Error; err != nil {
				return err
			}
			if rt.UsedAt == nil {
				return storage.ErrNotFound // expired or revoked
			}
			reused = true
			if err := revokeGrant(tx, site, grant.ID, now); err != nil {
				return err
			}
			_, err := bumpRevocationVersion(tx, site)
			return err
		}
		if grant.RevokedAt != nil || !grant.ExpiresAt.After(now) {
			return storage.ErrNotFound
		}
		next.SiteID, next.GrantID, next.ParentHash = site, grant.ID, oldHash
		utcToken(next)
		if next.ExpiresAt.After(grant.ExpiresAt) {
			next.ExpiresAt = grant.ExpiresAt // the grant's absolute limit caps every token
		}
		if err := tx.Create(next).Error; err != nil {
			return err
		}
		if now.Sub(grant.LastUsedAt) <= touchEvery {
			return nil
		}
		grant.LastUsedAt = now
		return tx.Model(&storage.Grant{}).Scopes(siteScope(site)).Where("id = ?", grant.ID).Update("last_used_at", now).Error
	})
	if err != nil {
		return nil, mapErr(err)
	}
	if reused {
		return &grant, storage.ErrRefreshReused
	}
	return &grant, nil
}

// utcToken writes a refresh token's times in UTC (see CreateGrant).
func utcToken(rt *storage.RefreshToken) {
	rt.CreatedAt, rt.ExpiresAt = rt.CreatedAt.UTC(), rt.ExpiresAt.UTC()
	if rt.UsedAt != nil {
		rt.UsedAt = ptrUTC(*rt.UsedAt)
	}
	if rt.RevokedAt != nil {
		rt.RevokedAt = ptrUTC(*rt.RevokedAt)
	}
}

func ptrUTC(t time.Time) *time.Time {
	t = t.UTC()
	return &t
}

// RefreshTokenByHash implements storage.GrantStore.
func (s *Store) RefreshTokenByHash(ctx context.Context, site tenant.ID, hash []byte) (*storage.RefreshToken, *storage.Grant, error) {
	var rt storage.RefreshToken
	db := s.db.WithContext(ctx)
	if err := db.Scopes(siteScope(site)).Take(&rt, "token_hash = ?", hash).Error; err != nil {
		return nil, nil, mapErr(err)
	}
	var g storage.Grant
	if err := db.Scopes(siteScope(site)).Take(&g, "id = ?", rt.GrantID).Error; err != nil {
		return nil, nil, mapErr(err)
	}
	// RevokeGrant records the revocation on the grant alone (no index finds
	// a grant's tokens, and every use of a token checks its grant); tokens
	// revoked before migration 0015 carry it themselves.
	if rt.RevokedAt == nil && g.RevokedAt != nil {
		rt.RevokedAt = ptrUTC(*g.RevokedAt)
	}
	return &rt, &g, nil
}

// RevokeGrant implements storage.GrantStore.
func (s *Store) RevokeGrant(ctx context.Context, site tenant.ID, id string, now time.Time) (int64, error) {
	var version int64
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// The grant row first, as in RotateRefreshToken; the site row last.
		var g storage.Grant
		if err := tx.Clauses(clause.Locking{Strength: clause.LockingStrengthUpdate}).Scopes(siteScope(site)).
			Select("id").Take(&g, "id = ?", id).Error; err != nil {
			return err
		}
		if err := revokeGrant(tx, site, id, now.UTC()); err != nil {
			return err
		}
		var err error
		version, err = bumpRevocationVersion(tx, site)
		return err
	})
	return version, mapErr(err)
}

// bumpRevocationVersion raises the site's revocation version in the
// revoking transaction and returns it. The UPDATE locks the site row until
// the commit, so versions are committed in the order they are handed out.
// Revocations are rare (people and applications revoking, reuse
// detection), so serializing a site's revocations costs nothing; the hot
// token paths never take this lock. It changes no key column, so foreign
// key checks on other tables (KEY SHARE) do not wait for it.
func bumpRevocationVersion(tx *gorm.DB, site tenant.ID) (int64, error) {
	var v int64
	err := tx.Raw("UPDATE sites SET revocation_version = revocation_version + 1 WHERE id = ? RETURNING revocation_version", int64(site)).
		Scan(&v).Error
	if err == nil && v == 0 {
		return 0, storage.ErrNotFound // no such site
	}
	return v, err
}

// RevocationVersions implements storage.GrantStore with one query per
// thousand sites.
func (s *Store) RevocationVersions(ctx context.Context, sites []tenant.ID) (map[tenant.ID]int64, error) {
	out := make(map[tenant.ID]int64, len(sites))
	for chunk := range slices.Chunk(sites, 1000) {
		ids := make([]int64, len(chunk))
		for i, id := range chunk {
			ids[i] = int64(id)
		}
		var rows []struct {
			ID                int64
			RevocationVersion int64
		}
		if err := s.db.WithContext(ctx).Table("sites").Select("id, revocation_version").
			Where("id IN ?", ids).Scan(&rows).Error; err != nil {
			return nil, mapErr(err)
		}
		for _, r := range rows {
			out[tenant.ID(r.ID)] = r.RevocationVersion
		}
	}
	return out, nil
}

// revokeGrant revokes the grant and thereby its refresh tokens: rotation
// (rotateSQL and the general path) refuses a token of a revoked grant, and
// RefreshTokenByHash reports the grant's revocation on the token.
func revokeGrant(tx *gorm.DB, site tenant.ID, id string, now time.Time) error {
	return tx.Model(&storage.Grant{}).Scopes(siteScope(site)).
		Where("id = ? AND revoked_at IS NULL", id).Update("revoked_at", now).Error
}

// RevokedGrants implements storage.GrantStore.
func (s *Store) RevokedGrants(ctx context.Context, site tenant.ID, since time.Time) ([]storage.RevokedGrant, error) {
	var rows []storage.RevokedGrant
	err := s.db.WithContext(ctx).Model(&storage.Grant{}).Scopes(siteScope(site)).
		Select("site_id, id AS grant_id, revoked_at").
		Where("revoked_at IS NOT NULL AND revoked_at > ?", since.UTC()).
		Scan(&rows).Error
	return rows, mapErr(err)
}

// RevokeToken implements storage.GrantStore.
func (s *Store) RevokeToken(ctx context.Context, t *storage.RevokedToken) (int64, error) {
	t.ExpiresAt, t.RevokedAt = t.ExpiresAt.UTC(), t.RevokedAt.UTC()
	var version int64
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(t).Error; err != nil {
			return err
		}
		var err error
		version, err = bumpRevocationVersion(tx, t.SiteID)
		return err
	})
	return version, mapErr(err)
}

// RevokedTokens implements storage.GrantStore.
func (s *Store) RevokedTokens(ctx context.Context, site tenant.ID, now time.Time) ([]storage.RevokedToken, error) {
	var rows []storage.RevokedToken
	err := s.db.WithContext(ctx).Scopes(siteScope(site)).Where("expires_at > ?", now.UTC()).Find(&rows).Error
	return rows, mapErr(err)
}

// TokenRevoked implements storage.GrantStore.
func (s *Store) TokenRevoked(ctx context.Context, site tenant.ID, jti string) (bool, error) {
	var n int64
	err := s.db.WithContext(ctx).Model(&storage.RevokedToken{}).Scopes(siteScope(site)).Where("jti = ?", jti).Count(&n).Error
	return n > 0, mapErr(err)
}

// TouchGrant implements storage.GrantStore.
func (s *Store) TouchGrant(ctx context.Context, site tenant.ID, id string, at time.Time) error {
	return mapErr(s.db.WithContext(ctx).Model(&storage.Grant{}).Scopes(siteScope(site)).
		Where("id = ?", id).Update("last_used_at", at.UTC()).Error)
}

// ListGrants implements storage.GrantStore.
func (s *Store) ListGrants(ctx context.Context, site tenant.ID, userID string, includeRevoked bool) ([]storage.Grant, error) {
	q := s.db.WithContext(ctx).Scopes(siteScope(site))
	if userID != "" {
		q = q.Where("user_id = ?", userID)
	}
	if !includeRevoked {
		q = q.Where("revoked_at IS NULL")
	}
	var gs []storage.Grant
	err := q.Order("created_at DESC, id").Find(&gs).Error
	return gs, mapErr(err)
}

// liveGrants narrows to the site's grants that are live at q.At and match
// q's person and client.
func (s *Store) liveGrants(ctx context.Context, site tenant.ID, q storage.GrantQuery) *gorm.DB {
	db := s.db.WithContext(ctx).Model(&storage.Grant{}).Scopes(siteScope(site)).
		Where("revoked_at IS NULL AND expires_at > ?", q.At.UTC())
	if q.UserID != "" {
		db = db.Where("user_id = ?", q.UserID)
	}
	if q.ClientID != "" {
		db = db.Where("client_id = ?", q.ClientID)
	}
	return db
}

// LiveGrants implements storage.GrantStore. The page is read by offset
// (admin lists are short-lived views, not feeds) along the index
// grants_site_live (migration 0005), newest first.
func (s *Store) LiveGrants(ctx context.Context, site tenant.ID, q storage.GrantQuery) ([]storage.Grant, int, error) {
	var total int64
	if err := s.liveGrants(ctx, site, q).Count(&total).Error; err != nil {
		return nil, 0, mapErr(err)
	}
	if total == 0 || (q.Limit > 0 && int64(q.Offset) >= total) {
		return nil, int(total), nil
	}
	db := s.liveGrants(ctx, site, q).Order("created_at DESC, id")
	if q.Limit > 0 {
		db = db.Limit(q.Limit)
	}
	if q.Offset > 0 {
		db = db.Offset(q.Offset)
	}
	var gs []storage.Grant
	if err := db.Find(&gs).Error; err != nil {
		return nil, 0, mapErr(err)
	}
	return gs, int(total), nil
}

// LiveGrantCounts implements storage.GrantStore.
func (s *Store) LiveGrantCounts(ctx context.Context, site tenant.ID, at time.Time) (map[string]int, error) {
	var rows []struct {
		ClientID string
		N        int
	}
	err := s.liveGrants(ctx, site, storage.GrantQuery{At: at}).
		Select("client_id, count(*) AS n").Group("client_id").Find(&rows).Error
	if err != nil {
		return nil, mapErr(err)
	}
	out := make(map[string]int, len(rows))
	for _, r := range rows {
		out[r.ClientID] = r.N
	}
	return out, nil
}

// Consent implements storage.GrantStore.
func (s *Store) Consent(ctx context.Context, site tenant.ID, userID, clientID string) (*storage.Consent, error) {
	var c storage.Consent
	err := s.db.WithContext(ctx).Scopes(siteScope(site)).
		Take(&c, "user_id = ? AND client_id = ?", userID, clientID).Error
	if err != nil {
		return nil, mapErr(err)
	}
	return &c, nil
}

// SaveConsent implements storage.GrantStore: it replaces the remembered
// scopes of the user and client.
func (s *Store) SaveConsent(ctx context.Context, c *storage.Consent) error {
	now := time.Now().UTC()
	c.CreatedAt, c.UpdatedAt = now, now
	if c.Scopes == nil {
		c.Scopes = []string{}
	}
	err := s.db.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "site_id"}, {Name: "user_id"}, {Name: "client_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"scopes", "updated_at"}),
	}).Create(c).Error
	return mapErr(err)
}
