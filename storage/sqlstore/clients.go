package sqlstore

import (
	"context"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// CreateClient implements storage.ClientStore.
func (s *Store) CreateClient(ctx context.Context, c *storage.Client) error {
	now := time.Now().UTC()
	c.CreatedAt, c.UpdatedAt = now, now
	normalizeClient(c)
	return mapErr(s.db.WithContext(ctx).Create(c).Error)
}

func normalizeClient(c *storage.Client) {
	if c.RedirectURIs == nil {
		c.RedirectURIs = []string{}
	}
	if c.Scopes == nil {
		c.Scopes = []string{}
	}
}

// UpdateClient implements storage.ClientStore. The client's site and
// client_id cannot change. The row is matched by client_id as well as by its
// ID: a client without a row ID would otherwise leave only the site scope in
// the WHERE clause, and the update would overwrite every client of the site.
func (s *Store) UpdateClient(ctx context.Context, c *storage.Client) error {
	if c.SiteID == nil && c.ID == 0 {
		return storage.ErrNotFound // a platform-wide client is named by its row ID
	}
	c.UpdatedAt = time.Now().UTC()
	normalizeClient(c)
	res := s.db.WithContext(ctx).Model(c).Select("*").Omit("created_at", "site_id", "client_id").
		Scopes(ownerScope(c.SiteID)).Where("client_id = ?", c.ClientID).Updates(c)
	if res.Error != nil {
		return mapErr(res.Error)
	}
	if res.RowsAffected == 0 {
		return storage.ErrNotFound
	}
	return nil
}

// ClientByID implements storage.ClientStore. A site's own client wins over
// a platform-wide one with the same ID.
func (s *Store) ClientByID(ctx context.Context, site tenant.ID, clientID string) (*storage.Client, error) {
	var cs []storage.Client
	err := s.db.WithContext(ctx).Scopes(siteOrPlatformScope(site)).
		Where("client_id = ?", clientID).
		Order(clause.OrderByColumn{Column: clause.Column{Raw: true, Name: "site_id IS NULL"}}).
		Limit(1).Find(&cs).Error
	if err != nil {
		return nil, mapErr(err)
	}
	if len(cs) == 0 {
		return nil, storage.ErrNotFound
	}
	return &cs[0], nil
}

// ListClients implements storage.ClientStore.
func (s *Store) ListClients(ctx context.Context, site tenant.ID, source string) ([]storage.Client, error) {
	var cs []storage.Client
	q := s.db.WithContext(ctx).Scopes(siteScope(site))
	if source != "" {
		q = q.Where("source = ?", source)
	}
	err := q.Order("created_at, id").Find(&cs).Error
	return cs, mapErr(err)
}

// DeleteClient implements storage.ClientStore.
func (s *Store) DeleteClient(ctx context.Context, site tenant.ID, clientID string) error {
	res := s.db.WithContext(ctx).Scopes(siteScope(site)).Where("client_id = ?", clientID).Delete(&storage.Client{})
	if res.Error != nil {
		return mapErr(res.Error)
	}
	if res.RowsAffected == 0 {
		return storage.ErrNotFound
	}
	return nil
}

// CreateVendorIntegration implements storage.ClientStore.
func (s *Store) CreateVendorIntegration(ctx context.Context, v *storage.VendorIntegration, c *storage.Client) error {
	now := time.Now().UTC()
	v.CreatedAt = now
	c.CreatedAt, c.UpdatedAt = now, now
	c.SiteID = nil
	c.ClientID = v.ClientID
	normalizeClient(c)
	for i, n := range v.ClientNames {
		v.ClientNames[i] = strings.TrimSpace(n)
	}
	return mapErr(s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(c).Error; err != nil {
			return err
		}
		return tx.Create(v).Error
	}))
}

// ListVendorIntegrations implements storage.ClientStore.
func (s *Store) ListVendorIntegrations(ctx context.Context) ([]storage.VendorIntegration, error) {
	var vs []storage.VendorIntegration
	err := s.db.WithContext(ctx).Order("id").Find(&vs).Error
	return vs, mapErr(err)
}

// AllowCIMDHost implements storage.ClientStore. Allowing a host again
// updates its review state.
func (s *Store) AllowCIMDHost(ctx context.Context, h *storage.CIMDHost) error {
	h.Host = strings.ToLower(h.Host)
	h.CreatedAt = time.Now().UTC()
	return mapErr(s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var existing []storage.CIMDHost
		if err := tx.Scopes(ownerScope(h.SiteID)).Where("host = ?", h.Host).Limit(1).Find(&existing).Error; err != nil {
			return err
		}
		if len(existing) == 1 {
			h.ID, h.CreatedAt = existing[0].ID, existing[0].CreatedAt
			// By owner as well as id: on a distributed database the site
			// routes the statement to its shard.
			return tx.Model(h).Scopes(ownerScope(h.SiteID)).Update("reviewed", h.Reviewed).Error
		}
		return tx.Create(h).Error
	}))
}

// CIMDHost implements storage.ClientStore. A site's own entry wins.
func (s *Store) CIMDHost(ctx context.Context, site tenant.ID, host string) (*storage.CIMDHost, error) {
	var hs []storage.CIMDHost
	err := s.db.WithContext(ctx).Scopes(siteOrPlatformScope(site)).
		Where("host = ?", strings.ToLower(host)).
		Order(clause.OrderByColumn{Column: clause.Column{Raw: true, Name: "site_id IS NULL"}}).
		Limit(1).Find(&hs).Error
	if err != nil {
		return nil, mapErr(err)
	}
	if len(hs) == 0 {
		return nil, storage.ErrNotFound
	}
	return &hs[0], nil
}

// TouchClient implements storage.ClientStore.
func (s *Store) TouchClient(ctx context.Context, site tenant.ID, clientID string, at time.Time) error {
	at = at.UTC()
	return mapErr(s.db.WithContext(ctx).Model(&storage.Client{}).Scopes(siteScope(site)).
		Where("client_id = ? AND (last_used_at IS NULL OR last_used_at < ?)", clientID, at.Add(-24*time.Hour)).
		Update("last_used_at", at).Error)
}

// PurgeUnusedClients implements storage.ClientStore. It spans sites by
// design: it is the platform's housekeeping, not a request of a site.
func (s *Store) PurgeUnusedClients(ctx context.Context, source string, before time.Time) (int64, error) {
	res := s.db.WithContext(ctx).Where("source = ? AND last_used_at IS NULL AND created_at < ?", source, before.UTC()).
		Delete(&storage.Client{})
	return res.RowsAffected, mapErr(res.Error)
}
