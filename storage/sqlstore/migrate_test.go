package sqlstore_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lectern/lectern/storage/sqlstore"
	"github.com/lectern/lectern/storage/sqlstore/sqltest"
)

const gooseUp = "-- +goose Up\n"

// Released migrations are what deployed databases ran: editing one changes
// nothing there and makes fresh databases differ from old ones. The hashes
// are those of the per-dialect files the migrator before goose applied
// (migrations/{postgres,sqlite}/ until the move to one templated source),
// so this also proves the templates render them byte for byte.
func TestReleasedMigrationsRenderUnchanged(t *testing.T) {
	released := map[string][]string{
		sqlstore.Postgres: {
			"5856373e3e7e36f2eea334ab6fbb67bce30840012c68653b3ff8456270ee9000",
			"433ae7ec49f2f69620b1eeb901a7c324a6c968ff3faa4d849b58a7156ce215ec",
			"56b4431a26e8521f90df67d1c484077e8b40aae117a7250314d9daecf46636e4",
			"42c563cf77ef9b97e910c33dbf75d82171fd86d84cf3a593c0a3e4d3f551d7a8",
			"809de8cad8517afdd586a166da16200618c92a602ead5e3b8413606c7e32070f",
		},
		sqlstore.SQLite: {
			"d6dad1efeb71422d621c7199c1b292e973172f0f62e014efbf57f8d57ce14e82",
			"002717e2702531e8bb2d45f8fe84f833cef1a7acb3f6e1ca9ad2072b3a26ab92",
			"5f35b182710775fcec74f78d4f32ff5b6a8d8a8286636d4ac168fc412ddfb5c1",
			"e60a974d24d606286d09e5f74bcf01fc97bf272328df547304d212d4bcfffc02",
			"809de8cad8517afdd586a166da16200618c92a602ead5e3b8413606c7e32070f",
		},
	}
	for dialect, hashes := range released {
		migs, err := sqlstore.Migrations(dialect)
		if err != nil {
			t.Fatal(err)
		}
		if len(migs) < len(hashes) {
			t.Fatalf("%s: %d migrations, %d released", dialect, len(migs), len(hashes))
		}
		for i, want := range hashes {
			m := migs[i]
			if !strings.HasPrefix(m.SQL, gooseUp) {
				t.Errorf("%s %04d_%s does not start with %q", dialect, m.Version, m.Name, gooseUp)
			}
			sum := sha256.Sum256([]byte(strings.TrimPrefix(m.SQL, gooseUp)))
			if got := hex.EncodeToString(sum[:]); got != want {
				t.Errorf("%s %04d_%s renders to sha256 %s, released as %s: add a migration instead of editing this one", dialect, m.Version, m.Name, got, want)
			}
		}
	}
}

func TestMigrate(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) { // migrated once
		ctx := context.Background()
		again, err := s.Migrate(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(again) != 0 {
			t.Fatalf("second Migrate applied %v; want nothing", again)
		}
		v, err := s.SchemaVersion(ctx)
		if err != nil {
			t.Fatal(err)
		}
		latest, _ := sqlstore.LatestVersion(s.Dialect())
		if v != latest {
			t.Fatalf("schema version %d, want %d", v, latest)
		}
	})
}

// A database that ran a newer migration before an older number landed (the
// numbers are handed out per change, ahead of time) gets the older one
// applied, out of order, and ends with the schema the code expects.
func TestMigrateAppliesAMigrationThatLandedLate(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		db := sqlstore.SQLDB(s)
		// As if 0009 (users.picture_file) had not landed when this
		// database was migrated past it.
		for _, q := range []string{"ALTER TABLE users DROP COLUMN picture_file", "DELETE FROM goose_db_version WHERE version_id = 9"} {
			if _, err := db.ExecContext(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		applied, err := s.Migrate(ctx)
		if err != nil {
			t.Fatalf("Migrate with 0009 missing below newer versions: %v", err)
		}
		if !slices.Contains(applied, "0009_user_picture") {
			t.Fatalf("Migrate applied %v; want 0009_user_picture among them", applied)
		}
		if err := s.CheckSchema(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// A binary must not run on (or migrate) a schema a newer binary made.
func TestMigrateRefusesNewerDatabase(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		latest, _ := sqlstore.LatestVersion(s.Dialect())
		next := latest + 1
		if _, err := sqlstore.SQLDB(s).ExecContext(ctx, rebind(s, "INSERT INTO goose_db_version (version_id, is_applied) VALUES ($1, $2)"), next, true); err != nil {
			t.Fatal(err)
		}
		if v, err := s.SchemaVersion(ctx); err != nil || v != next {
			t.Fatalf("SchemaVersion = %d, %v; want %d", v, err, next)
		}
		_, err := s.Migrate(ctx)
		if err == nil || !strings.Contains(err.Error(), "newer than this binary knows") {
			t.Fatalf("Migrate on a database at version %d: %v; want a refusal", next, err)
		}
	})
}

// Replicas that start at once must not apply a migration twice.
func TestMigrateConcurrently(t *testing.T) {
	for _, tc := range []struct {
		dialect string
		url     func(t *testing.T) string
	}{
		{sqlstore.Postgres, func(t *testing.T) string { return sqltest.PostgresSchemaURL(t) }},
		// One file opened by separate pools, as by separate processes. The
		// file exists (a first Open switched it to WAL, which takes an
		// exclusive lock that concurrent first opens would fight over).
		{sqlstore.SQLite, func(t *testing.T) string {
			url := "sqlite:" + filepath.Join(t.TempDir(), "lectern.db")
			s, err := sqlstore.Open(context.Background(), url, nil)
			if err != nil {
				t.Fatal(err)
			}
			s.Close()
			return url
		}},
	} {
		t.Run(tc.dialect, func(t *testing.T) {
			url := tc.url(t)
			var wg sync.WaitGroup
			results := make([][]string, 4)
			errs := make([]error, 4)
			for i := range results {
				wg.Go(func() {
					s, err := sqlstore.Open(context.Background(), url, nil)
					if err != nil {
						errs[i] = err
						return
					}
					defer s.Close()
					results[i], errs[i] = s.Migrate(context.Background())
				})
			}
			wg.Wait()
			var all []string
			for i := range results {
				if errs[i] != nil {
					t.Fatalf("replica %d: %v", i, errs[i])
				}
				all = append(all, results[i]...)
			}
			slices.Sort(all)
			migs, _ := sqlstore.Migrations(tc.dialect)
			if len(all) != len(migs) || len(slices.Compact(all)) != len(migs) {
				t.Fatalf("4 replicas applied %v in all; want each of the %d migrations exactly once", all, len(migs))
			}
		})
	}
}

// A SQLite replica waits while another holds the migration lock, touches
// nothing meanwhile, gives up when its context ends, and migrates once the
// holder lets go: goose's version read cannot race another replica's run.
func TestMigrateWaitsForTheSQLiteLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lectern.db")
	s, err := sqlstore.Open(context.Background(), "sqlite:"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	release, err := sqlstore.LockMigrationFile(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if applied, err := s.Migrate(ctx); !errors.Is(err, context.DeadlineExceeded) || len(applied) != 0 {
		t.Fatalf("Migrate while another replica holds the lock = %v, %v; want nothing applied and the deadline", applied, err)
	}
	if v, err := s.SchemaVersion(context.Background()); err != nil || v != 0 {
		t.Fatalf("schema version after the wait = %d, %v; want 0", v, err)
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
	applied, err := s.Migrate(context.Background())
	migs, _ := sqlstore.Migrations(sqlstore.SQLite)
	if err != nil || len(applied) != len(migs) {
		t.Fatalf("Migrate after the lock was released applied %d of %d: %v", len(applied), len(migs), err)
	}
}

func rebind(s *sqlstore.Store, query string) string {
	if s.Dialect() != sqlstore.SQLite {
		return query
	}
	for _, p := range []string{"$1", "$2", "$3", "$4", "$5", "$6"} {
		query = strings.Replace(query, p, "?", 1)
	}
	return query
}
