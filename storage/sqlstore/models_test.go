package sqlstore_test

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/lectern/lectern/storage/sqlstore"
	"github.com/lectern/lectern/storage/sqlstore/sqltest"
)

func TestSchemaMatchesModels(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		if err := s.CheckSchema(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
}

// storageRecordTypes returns the struct types of package storage that map
// a table: those with a field tagged primaryKey.
func storageRecordTypes(t *testing.T) (records []string, tags []string) {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob("../*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				return true
			}
			record := false
			for _, field := range st.Fields.List {
				if field.Tag == nil {
					continue
				}
				tag := reflect.StructTag(strings.Trim(field.Tag.Value, "`")).Get("gorm")
				if tag == "" {
					continue
				}
				tags = append(tags, ts.Name.Name+": "+tag)
				record = record || slices.Contains(strings.Split(tag, ";"), "primaryKey")
			}
			if record {
				records = append(records, ts.Name.Name)
			}
			return false
		})
	}
	return records, tags
}

// CheckSchema checks the models it is given: a record type left out of
// storedModels would drift unseen.
func TestStoredModelsListsEveryRecordType(t *testing.T) {
	records, _ := storageRecordTypes(t)
	listed := map[string]bool{}
	for _, m := range sqlstore.StoredModels() {
		listed[reflect.TypeOf(m).Elem().Name()] = true
	}
	if len(records) < 40 {
		t.Fatalf("found %d record types in package storage; the parse is broken", len(records))
	}
	for _, r := range records {
		if !listed[r] {
			t.Errorf("storage.%s has a primaryKey field but is not in sqlstore.storedModels", r)
		}
	}
	for name := range listed {
		if !slices.Contains(records, name) {
			t.Errorf("storage.%s is in storedModels but tags no primaryKey field: tag it, so this test finds new record types", name)
		}
	}
}

// The migrations are the one description of the schema. gorm reads these
// tag keys only to create tables (AutoMigrate), which lectern never does: on
// a model they would be a second description that nothing keeps true.
func TestModelsCarryNoSchemaTags(t *testing.T) {
	ddlOnly := []string{"INDEX", "UNIQUEINDEX", "UNIQUE", "SIZE", "TYPE", "NOT NULL", "NOTNULL", "CHECK", "PRECISION", "SCALE", "COMMENT"}
	_, tags := storageRecordTypes(t)
	for _, tag := range tags {
		_, settings, _ := strings.Cut(tag, ": ")
		for _, s := range strings.Split(settings, ";") {
			key, _, _ := strings.Cut(s, ":")
			if slices.Contains(ddlOnly, strings.ToUpper(strings.TrimSpace(key))) {
				t.Errorf("%s: %q describes the schema; say it in a migration instead", tag, s)
			}
		}
	}
}

// The check itself must notice each kind of drift, or it proves nothing.
func TestCheckSchemaNoticesDrift(t *testing.T) {
	type ghost struct {
		ID     int64 `gorm:"primaryKey"`
		Name   *string
		Note   string
		Amount int64
		Haunt  string
	}
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		if err := s.Exec(ctx, `CREATE TABLE ghosts (id integer PRIMARY KEY, name text NOT NULL, note text,
			amount text NOT NULL DEFAULT '', secret text NOT NULL)`); err != nil {
			t.Fatal(err)
		}
		err := sqlstore.CheckModels(ctx, s, &ghost{})
		if err == nil {
			t.Fatal("CheckModels accepted a model that does not fit its table")
		}
		for _, want := range []string{
			"ghosts.haunt (ghost.Haunt): no such column",
			"ghosts.note (ghost.Note): the column is nullable, but a string cannot hold NULL",
			"ghosts.name (ghost.Name): the column is NOT NULL, but the field is a *string",
			"(text) does not hold the field's int64 (integer)", // the column type is spelled per dialect
			"ghosts.secret: NOT NULL without a default, and model ghost does not write it",
		} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("the check missed %q:\n%v", want, err)
			}
		}

		if err := s.CheckSchema(ctx); err != nil {
			t.Fatalf("before dropping indexes: %v", err)
		}
		for _, stmt := range []string{"DROP INDEX grants_user_site", "DROP INDEX clients_site_client"} {
			if err := s.Exec(ctx, stmt); err != nil {
				t.Fatal(err)
			}
		}
		err = s.CheckSchema(ctx)
		for _, want := range []string{"index grants (user_id, site_id), relied on by ListGrants", "index partial unique clients (site_id, client_id)"} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("CheckSchema after dropping an index: %v; want it to name %q", err, want)
			}
		}
	})
}

// A drifted database at this binary's version is refused at start-up.
func TestOpenRefusesDriftedSchema(t *testing.T) {
	for dialect, newURL := range emptyDatabases() {
		t.Run(dialect, func(t *testing.T) {
			ctx := context.Background()
			url := newURL(t)
			s := open(t, url)
			if _, err := s.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			if err := s.Exec(ctx, "DROP INDEX revoked_tokens_site_expiry"); err != nil {
				t.Fatal(err)
			}
			s.Close()
			again, err := sqlstore.Open(ctx, url, nil)
			if err == nil {
				again.Close()
				t.Fatal("Open accepted a schema without the index RevokedTokens relies on")
			}
			if !strings.Contains(err.Error(), "revoked_tokens (site_id, expires_at)") {
				t.Fatalf("Open: %v; want it to name the missing index", err)
			}
		})
	}
}
