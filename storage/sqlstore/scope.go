package sqlstore

import (
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/lectern/lectern/tenant"
)

// siteScope is the one place that restricts a query to a site's rows
// (compare Hydra's QueryWithNetwork). Every site-owned query goes through it;
// nothing else writes a site_id condition.
func siteScope(site tenant.ID) func(*gorm.DB) *gorm.DB {
	return func(db *gorm.DB) *gorm.DB {
		return db.Where(clause.Eq{Column: clause.Column{Table: clause.CurrentTable, Name: "site_id"}, Value: site})
	}
}

// siteOrPlatformScope admits the site's rows and platform-wide rows
// (site_id NULL): vendor clients and platform CIMD hosts.
func siteOrPlatformScope(site tenant.ID) func(*gorm.DB) *gorm.DB {
	return func(db *gorm.DB) *gorm.DB {
		col := clause.Column{Table: clause.CurrentTable, Name: "site_id"}
		return db.Where(clause.Or(clause.Eq{Column: col, Value: site}, clause.Eq{Column: col, Value: nil}))
	}
}

// platformScope admits only platform-wide rows (site_id NULL).
func platformScope(db *gorm.DB) *gorm.DB {
	return db.Where(clause.Eq{Column: clause.Column{Table: clause.CurrentTable, Name: "site_id"}, Value: nil})
}

// ownerScope is siteScope for a site's row and platformScope for a
// platform-wide one (site nil).
func ownerScope(site *tenant.ID) func(*gorm.DB) *gorm.DB {
	if site == nil {
		return platformScope
	}
	return siteScope(*site)
}
