package sqlstore_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/lectern/lectern/storage/sqlstore"
	"github.com/lectern/lectern/storage/sqlstore/sqltest"
)

func TestMigrationsAreParallelAcrossDialects(t *testing.T) {
	pg, err := sqlstore.Migrations(sqlstore.Postgres)
	if err != nil {
		t.Fatal(err)
	}
	lite, err := sqlstore.Migrations(sqlstore.SQLite)
	if err != nil {
		t.Fatal(err)
	}
	if len(pg) != len(lite) {
		t.Fatalf("postgres has %d migrations, sqlite %d: every version needs both", len(pg), len(lite))
	}
	for i := range pg {
		if pg[i].Name != lite[i].Name {
			t.Errorf("migration %d is %q on postgres but %q on sqlite", i+1, pg[i].Name, lite[i].Name)
		}
		if c1, c2 := strings.Count(pg[i].SQL, "CREATE TABLE"), strings.Count(lite[i].SQL, "CREATE TABLE"); c1 != c2 {
			t.Errorf("migration %d creates %d tables on postgres, %d on sqlite", i+1, c1, c2)
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
		migs, _ := sqlstore.Migrations(s.Dialect())
		if v != len(migs) {
			t.Fatalf("schema version %d, want %d", v, len(migs))
		}
	})
}

// Replicas that start at once must not apply a migration twice.
func TestMigrateConcurrently(t *testing.T) {
	url := sqltest.PostgresSchemaURL(t)
	var wg sync.WaitGroup
	results := make([][]string, 4)
	errs := make([]error, 4)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := sqlstore.Open(context.Background(), url, nil)
			if err != nil {
				errs[i] = err
				return
			}
			defer s.Close()
			results[i], errs[i] = s.Migrate(context.Background())
		}()
	}
	wg.Wait()
	total := 0
	for i := range results {
		if errs[i] != nil {
			t.Fatalf("replica %d: %v", i, errs[i])
		}
		total += len(results[i])
	}
	migs, _ := sqlstore.Migrations(sqlstore.Postgres)
	if total != len(migs) {
		t.Fatalf("4 replicas applied %d migrations in all; want each of the %d exactly once", total, len(migs))
	}
}
