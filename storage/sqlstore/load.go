package sqlstore

import (
	"context"

	"gorm.io/gorm"
)

// Load inserts records (pointers to storage record types) in one
// transaction, in order. It is the bulk loader of seeds and test fixtures;
// request paths use the typed store methods. Each record carries its own
// SiteID.
func (s *Store) Load(ctx context.Context, records ...any) error {
	return mapErr(s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		for _, r := range records {
			if err := tx.Create(r).Error; err != nil {
				return err
			}
		}
		return nil
	}))
}
