package sqlstore

import (
	"context"
	"database/sql"
)

// Hooks for the external tests.

// SQLDB returns the store's pool, for tests that build a database the way
// an older binary did.
func SQLDB(s *Store) *sql.DB { return s.sqlDB }

// StoredModels is storedModels.
var StoredModels = storedModels

// CheckModels runs the schema check on the given models and no index needs.
func CheckModels(ctx context.Context, s *Store, models ...any) error {
	return s.checkSchema(ctx, models, nil)
}

// LegacyTombstone is legacyTombstone.
const LegacyTombstone = legacyTombstone

// LockMigrationFile takes the lock Migrate takes beside a SQLite file, as
// another process migrating it would hold it.
func LockMigrationFile(ctx context.Context, path string) (func() error, error) {
	return lockFile(ctx, path+migrationLockSuffix)
}
