package sqlstore

import (
	"context"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// CreateSite implements storage.SiteStore.
func (s *Store) CreateSite(ctx context.Context, site *storage.Site) error {
	now := time.Now().UTC()
	site.CreatedAt, site.UpdatedAt = now, now
	normalizeSite(site)
	return mapErr(s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(site).Error; err != nil {
			return err
		}
		return tx.Create(siteHosts(site)).Error
	}))
}

// UpdateSite implements storage.SiteStore.
func (s *Store) UpdateSite(ctx context.Context, site *storage.Site) error {
	if site.ID == 0 {
		return storage.ErrNotFound
	}
	site.UpdatedAt = time.Now().UTC()
	normalizeSite(site)
	return mapErr(s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Model(site).Select("*").Omit("created_at").Updates(site)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return storage.ErrNotFound
		}
		if err := tx.Scopes(siteScope(site.ID)).Delete(&storage.SiteHost{}).Error; err != nil {
			return err
		}
		return tx.Create(siteHosts(site)).Error
	}))
}

func normalizeSite(site *storage.Site) {
	if site.Aliases == nil {
		site.Aliases = []string{}
	}
	if site.Settings == nil {
		site.Settings = map[string]any{}
	}
	if site.Locale == "" {
		site.Locale = "en"
	}
}

// siteHosts are the rows that make site resolvable: its origin's host and
// every alias.
func siteHosts(site *storage.Site) []storage.SiteHost {
	t := site.Tenant()
	hosts := []storage.SiteHost{{Host: t.Host(), SiteID: site.ID}}
	for _, a := range site.Aliases {
		a = strings.ToLower(a)
		if a != t.Host() {
			hosts = append(hosts, storage.SiteHost{Host: a, SiteID: site.ID})
		}
	}
	return hosts
}

// SiteByID implements storage.SiteStore.
func (s *Store) SiteByID(ctx context.Context, id tenant.ID) (*storage.Site, error) {
	var site storage.Site
	if err := s.db.WithContext(ctx).Take(&site, "id = ?", id).Error; err != nil {
		return nil, mapErr(err)
	}
	return &site, nil
}

// SiteBySlug implements storage.SiteStore.
func (s *Store) SiteBySlug(ctx context.Context, slug string) (*storage.Site, error) {
	var site storage.Site
	if err := s.db.WithContext(ctx).Take(&site, "slug = ?", slug).Error; err != nil {
		return nil, mapErr(err)
	}
	return &site, nil
}

// ListSites implements storage.SiteStore.
func (s *Store) ListSites(ctx context.Context, after tenant.ID, limit int) ([]storage.Site, error) {
	var sites []storage.Site
	err := s.db.WithContext(ctx).Where("id > ?", after).Order("id").Limit(limit).Find(&sites).Error
	return sites, mapErr(err)
}

// LookupHost implements tenant.Lookup: one indexed join on site_hosts.
func (s *Store) LookupHost(ctx context.Context, host string) (*tenant.Site, error) {
	var sites []storage.Site
	err := s.db.WithContext(ctx).
		Joins("JOIN site_hosts ON site_hosts.site_id = sites.id").
		Where("site_hosts.host = ?", host).Limit(1).Find(&sites).Error
	if err != nil {
		return nil, mapErr(err)
	}
	if len(sites) == 0 {
		return nil, nil
	}
	return sites[0].Tenant(), nil
}
