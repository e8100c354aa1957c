package sqlstore_test

import (
	"context"
	"testing"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/storage/sqlstore"
	"github.com/lectern/lectern/storage/sqlstore/sqltest"
	"github.com/lectern/lectern/storage/storagetest"
)

// TestStoreContract runs the storage contract on both dialects, each
// subtest on a fresh database (a SQLite file, a PostgreSQL schema).
func TestStoreContract(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		storagetest.RunStoreTests(t, func(t *testing.T) storage.Store { return sqltest.SQLite(t) })
	})
	// On PostgreSQL every statement is recorded, and afterwards each one
	// on a table Citus would distribute must name its site.
	var log statementLog
	t.Run("postgres", func(t *testing.T) {
		storagetest.RunStoreTests(t, func(t *testing.T) storage.Store {
			s, err := sqlstore.Open(context.Background(), sqltest.PostgresSchemaURL(t), &sqlstore.Options{OnStatement: log.record})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			if _, err := s.Migrate(context.Background()); err != nil {
				t.Fatal(err)
			}
			return s
		})
	})
	t.Run("postgres/every-distributed-query-names-its-site", func(t *testing.T) {
		if len(log.stmts) == 0 {
			t.Skip("the PostgreSQL contract did not run")
		}
		checkSiteQueries(t, &log)
	})
}
