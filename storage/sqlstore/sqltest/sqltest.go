package sqltest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"path/filepath"
	"testing"

	"github.com/lectern/lectern/storage/sqlstore"
	"github.com/lectern/lectern/storage/storagetest"
)

// SQLite returns a migrated store on a fresh SQLite file.
func SQLite(tb testing.TB) *sqlstore.Store {
	tb.Helper()
	s, err := sqlstore.Open(context.Background(), "sqlite:"+filepath.Join(tb.TempDir(), "lectern.db"), nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	if _, err := s.Migrate(context.Background()); err != nil {
		tb.Fatal(err)
	}
	return s
}

// Postgres returns a migrated store on a fresh PostgreSQL schema.
func Postgres(tb testing.TB) *sqlstore.Store {
	tb.Helper()
	dsn := PostgresSchemaURL(tb)
	s, err := sqlstore.Open(context.Background(), dsn, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	if _, err := s.Migrate(context.Background()); err != nil {
		tb.Fatal(err)
	}
	return s
}

// PostgresSchemaURL creates an empty schema of the test's own and returns a
// URL whose search_path selects it. The schema is dropped at cleanup.
func PostgresSchemaURL(tb testing.TB) string {
	tb.Helper()
	base := storagetest.PostgresURL(tb)
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "lectern_test_" + hex.EncodeToString(b[:])
	admin, err := sqlstore.Open(context.Background(), base, nil)
	if err != nil {
		tb.Fatal(err)
	}
	if err := admin.Exec(context.Background(), "CREATE SCHEMA "+schema); err != nil {
		admin.Close()
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		_ = admin.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
		admin.Close()
	})
	u, err := url.Parse(base)
	if err != nil {
		tb.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// Each runs f once per backend: "sqlite" always, "postgres" when reachable
// (or required).
func Each(t *testing.T, f func(t *testing.T, s *sqlstore.Store)) {
	t.Run("sqlite", func(t *testing.T) { f(t, SQLite(t)) })
	t.Run("postgres", func(t *testing.T) { f(t, Postgres(t)) })
}
