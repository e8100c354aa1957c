package sqlstore_test

import (
	"testing"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/storage/sqlstore/sqltest"
	"github.com/lectern/lectern/storage/storagetest"
)

// TestStoreContract runs the storage contract on both dialects, each
// subtest on a fresh database (a SQLite file, a PostgreSQL schema).
func TestStoreContract(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		storagetest.RunStoreTests(t, func(t *testing.T) storage.Store { return sqltest.SQLite(t) })
	})
	t.Run("postgres", func(t *testing.T) {
		storagetest.RunStoreTests(t, func(t *testing.T) storage.Store { return sqltest.Postgres(t) })
	})
}
