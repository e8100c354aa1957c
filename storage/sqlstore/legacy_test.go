package sqlstore_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lectern/lectern/storage/sqlstore"
	"github.com/lectern/lectern/storage/sqlstore/sqltest"
)

// legacyMigrate is the migrator lectern had before goose, as it ran: its
// own schema_migrations table, the statements split at line-ending
// semicolons, each version in a transaction. Its SQL is the released
// files, which the templates render byte for byte
// (TestReleasedMigrationsRenderUnchanged). It applies versions up to upTo.
func legacyMigrate(ctx context.Context, db *sql.DB, dialect string, upTo int) error {
	migs, err := sqlstore.Migrations(dialect)
	if err != nil {
		return err
	}
	migs = migs[:5] // the versions that binary shipped
	ts, ph := "timestamptz", []string{"$1", "$2", "$3"}
	if dialect == sqlstore.SQLite {
		ts, ph = "datetime", []string{"?", "?", "?"}
	}
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version integer PRIMARY KEY, name text NOT NULL, applied_at `+ts+` NOT NULL)`); err != nil {
		return err
	}
	var newest int
	if err := db.QueryRowContext(ctx, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations").Scan(&newest); err != nil {
		return err
	}
	if newest > len(migs) {
		return fmt.Errorf("sqlstore: the database is at schema version %d, newer than this binary knows (%d); upgrade lectern", newest, len(migs))
	}
	for _, m := range migs {
		if m.Version <= newest || m.Version > upTo {
			continue
		}
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		for _, stmt := range legacySplit(strings.TrimPrefix(m.SQL, gooseUp)) {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				tx.Rollback()
				return fmt.Errorf("migration %04d_%s: %w", m.Version, m.Name, err)
			}
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO schema_migrations (version, name, applied_at) VALUES ("+strings.Join(ph, ", ")+")",
			m.Version, m.Name, time.Now().UTC()); err != nil {
			tx.Rollback()
			return err
		}
		if err := tx.Commit(); err != nil {
			return err
		}
	}
	return nil
}

func legacySplit(src string) []string {
	var (
		out []string
		cur strings.Builder
	)
	for _, line := range strings.Split(src, "\n") {
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "--") {
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
		if strings.HasSuffix(trimmed, ";") {
			out = append(out, strings.TrimSpace(cur.String()))
			cur.Reset()
		}
	}
	return out
}

// backends returns an empty database per dialect, unmigrated.
func emptyDatabases() map[string]func(t *testing.T) string {
	return map[string]func(t *testing.T) string{
		sqlstore.SQLite:   func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "lectern.db") },
		sqlstore.Postgres: func(t *testing.T) string { return sqltest.PostgresSchemaURL(t) },
	}
}

func open(t *testing.T, url string) *sqlstore.Store {
	t.Helper()
	s, err := sqlstore.Open(context.Background(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// A fleet deployed before goose upgrades in place: its history is adopted,
// nothing is re-run, its rows stay, and the old binary no longer runs on it.
func TestUpgradeFromLegacyMigrator(t *testing.T) {
	for _, dialect := range []string{sqlstore.SQLite, sqlstore.Postgres} {
		t.Run(dialect, func(t *testing.T) {
			ctx := context.Background()
			url := emptyDatabases()[dialect](t)
			old := open(t, url)
			db := sqlstore.SQLDB(old)
			if err := legacyMigrate(ctx, db, dialect, 5); err != nil {
				t.Fatal(err)
			}
			now := time.Now().UTC()
			for _, stmt := range []struct {
				q    string
				args []any
			}{
				{"INSERT INTO sites (slug, name, origin, registration_variant, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6)",
					[]any{"kept", "Kept School", "https://kept.example", "A", now, now}},
				{"INSERT INTO users (id, email, name, created_at, updated_at) VALUES ($1, $2, $3, $4, $5)",
					[]any{"u-kept", "kept@example.com", "Kept", now, now}},
			} {
				if _, err := db.ExecContext(ctx, rebind(old, stmt.q), stmt.args...); err != nil {
					t.Fatal(err)
				}
			}
			old.Close()

			// The new binary: Open checks the schema (it is at the version
			// this binary knows), Migrate adopts the history.
			s := open(t, url)
			if v, err := s.SchemaVersion(ctx); err != nil || v != 5 {
				t.Fatalf("SchemaVersion before adoption = %d, %v; want 5", v, err)
			}
			applied, err := s.Migrate(ctx)
			if err != nil {
				t.Fatal(err)
			}
			migs, _ := sqlstore.Migrations(dialect)
			var want []string
			for _, m := range migs[5:] {
				want = append(want, fmt.Sprintf("%04d_%s", m.Version, m.Name))
			}
			if !slices.Equal(applied, want) {
				t.Fatalf("Migrate after the old migrator applied %v; want only the versions after 5: %v", applied, want)
			}
			versions := gooseVersions(t, s)
			if !slices.Equal(versions[:6], []int64{0, 1, 2, 3, 4, 5}) {
				t.Fatalf("goose_db_version holds %v; want 0..5 adopted", versions)
			}
			if site, err := s.SiteBySlug(ctx, "kept"); err != nil || site.Origin != "https://kept.example" {
				t.Fatalf("site made before the upgrade: %+v, %v", site, err)
			}
			if u, err := s.UserByEmail(ctx, "kept@example.com"); err != nil || u.ID != "u-kept" {
				t.Fatalf("user made before the upgrade: %+v, %v", u, err)
			}
			if again, err := s.Migrate(ctx); err != nil || len(again) != 0 {
				t.Fatalf("second Migrate: %v, %v; want nothing applied", again, err)
			}
			if n := len(gooseVersions(t, s)); n != len(versions) {
				t.Fatalf("second Migrate adopted again: %d versions, had %d", n, len(versions))
			}
			// A binary from before goose refuses the adopted database.
			err = legacyMigrate(ctx, sqlstore.SQLDB(s), dialect, 5)
			if err == nil || !strings.Contains(err.Error(), "newer than this binary knows") {
				t.Fatalf("old migrator on an adopted database: %v; want a refusal", err)
			}
		})
	}
}

// A database the old migrator left part way is adopted as far as it got
// and migrated on from there.
func TestUpgradeFromPartialLegacyHistory(t *testing.T) {
	for _, dialect := range []string{sqlstore.SQLite, sqlstore.Postgres} {
		t.Run(dialect, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, emptyDatabases()[dialect](t))
			if err := legacyMigrate(ctx, sqlstore.SQLDB(s), dialect, 3); err != nil {
				t.Fatal(err)
			}
			applied, err := s.Migrate(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(applied) == 0 || applied[0] != "0004_admin" {
				t.Fatalf("applied %v; want 0004_admin first", applied)
			}
			migs, _ := sqlstore.Migrations(dialect)
			if len(applied) != len(migs)-3 {
				t.Fatalf("applied %v; want the %d versions after 3", applied, len(migs)-3)
			}
		})
	}
}

func gooseVersions(t *testing.T, s *sqlstore.Store) []int64 {
	t.Helper()
	rows, err := sqlstore.SQLDB(s).QueryContext(context.Background(), "SELECT version_id FROM goose_db_version ORDER BY version_id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}
