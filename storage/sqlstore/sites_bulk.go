package sqlstore

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// SitesBySlugs returns the stored sites whose slug is among slugs (in no
// particular order): one query for a whole import batch.
func (s *Store) SitesBySlugs(ctx context.Context, slugs []string) ([]storage.Site, error) {
	if len(slugs) == 0 {
		return nil, nil
	}
	var sites []storage.Site
	err := s.db.WithContext(ctx).Where("slug IN ?", slugs).Find(&sites).Error
	return sites, mapErr(err)
}

// HostOwners returns, for every host among hosts that a site serves, that
// site's ID.
func (s *Store) HostOwners(ctx context.Context, hosts []string) (map[string]tenant.ID, error) {
	out := make(map[string]tenant.ID)
	if len(hosts) == 0 {
		return out, nil
	}
	var rows []storage.SiteHost
	if err := s.db.WithContext(ctx).Where("host IN ?", hosts).Find(&rows).Error; err != nil {
		return nil, mapErr(err)
	}
	for _, r := range rows {
		out[r.Host] = r.SiteID
	}
	return out, nil
}

// CreateSitesWithKeys inserts sites, their host rows and their first keys
// in one transaction: a batch is stored whole or not at all, so no site is
// ever left without a key ring. keysFor receives the IDs the database
// assigned (in the order of sites) and returns the keys to insert; key
// generation needs the IDs because a sealed key is bound to its site. A
// taken slug, origin or alias anywhere in the batch is ErrConflict.
func (s *Store) CreateSitesWithKeys(ctx context.Context, sites []*storage.Site, keysFor func(ids []tenant.ID) ([]*storage.SiteKey, error)) error {
	if len(sites) == 0 {
		return nil
	}
	now := time.Now().UTC()
	var hosts []storage.SiteHost
	for _, site := range sites {
		site.CreatedAt, site.UpdatedAt = now, now
		normalizeSite(site)
	}
	return mapErr(s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.CreateInBatches(sites, bulkBatch).Error; err != nil {
			return err
		}
		ids := make([]tenant.ID, len(sites))
		for i, site := range sites {
			ids[i] = site.ID
			hosts = append(hosts, siteHosts(site)...)
		}
		if err := tx.CreateInBatches(hosts, bulkBatch).Error; err != nil {
			return err
		}
		keys, err := keysFor(ids)
		if err != nil {
			return err
		}
		for _, k := range keys {
			k.CreatedAt, k.ActivatesAt = k.CreatedAt.UTC(), k.ActivatesAt.UTC()
			if k.RotateAt != nil {
				k.RotateAt = ptrUTC(*k.RotateAt)
			}
		}
		if len(keys) == 0 {
			return nil
		}
		return tx.CreateInBatches(keys, bulkBatch).Error
	}))
}

// bulkBatch bounds the rows of one multi-row INSERT: PostgreSQL allows
// 65535 bind parameters per statement, SQLite 32766; sites have 14 columns.
const bulkBatch = 500
