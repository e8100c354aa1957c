package sqlstore

import (
	"context"
	"fmt"
	"strings"

	"gorm.io/gorm"
)

// CheckModels verifies that every column gorm derives from each model exists
// in the migrated schema. The migrations are hand-written SQL per dialect, so
// this is what catches a model field that no migration created.
func (s *Store) CheckModels(ctx context.Context, models ...any) error {
	m := s.db.WithContext(ctx).Migrator()
	var missing []string
	for _, model := range models {
		stmt := &gorm.Statement{DB: s.db}
		if err := stmt.Parse(model); err != nil {
			return err
		}
		if !m.HasTable(model) {
			missing = append(missing, stmt.Schema.Table)
			continue
		}
		for _, f := range stmt.Schema.Fields {
			if f.DBName == "" {
				continue
			}
			if !m.HasColumn(model, f.DBName) {
				missing = append(missing, stmt.Schema.Table+"."+f.DBName)
			}
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("sqlstore: %s schema lacks %s", s.dialect, strings.Join(missing, ", "))
	}
	return nil
}
