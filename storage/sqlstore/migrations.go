package sqlstore

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"sync"
	"testing/fstest"
	"text/template"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// dialectSQL fills the placeholders of the migration templates: the only
// places where the two dialects' schemas differ are these type names and
// the statements inside {{if .Postgres}}.
type dialectSQL struct {
	Postgres bool
	ID       string // a 64-bit auto-increment primary key
	Int64    string
	Time     string
	Bytes    string
}

var dialects = map[string]dialectSQL{
	Postgres: {Postgres: true, ID: "bigserial PRIMARY KEY", Int64: "bigint", Time: "timestamptz", Bytes: "bytea"},
	SQLite:   {ID: "integer PRIMARY KEY AUTOINCREMENT", Int64: "integer", Time: "datetime", Bytes: "blob"},
}

// Migration is one versioned schema step, rendered for one dialect.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// migrationSet is the rendered migrations of one dialect, as a list and as
// the file system goose reads.
type migrationSet struct {
	list []Migration
	fsys fstest.MapFS
}

// Rendered once per dialect: Migrate runs at every start and in every test.
var renderedSets = map[string]func() (*migrationSet, error){
	Postgres: sync.OnceValues(func() (*migrationSet, error) { return renderMigrations(Postgres) }),
	SQLite:   sync.OnceValues(func() (*migrationSet, error) { return renderMigrations(SQLite) }),
}

func migrationsFor(dialect string) (*migrationSet, error) {
	render, ok := renderedSets[dialect]
	if !ok {
		return nil, fmt.Errorf("sqlstore: no migrations for dialect %q", dialect)
	}
	return render()
}

// Migrations returns the dialect's migrations in version order.
func Migrations(dialect string) ([]Migration, error) {
	set, err := migrationsFor(dialect)
	if err != nil {
		return nil, err
	}
	return append([]Migration(nil), set.list...), nil
}

func renderMigrations(dialect string) (*migrationSet, error) {
	names, err := fs.Glob(migrationFS, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	set := &migrationSet{fsys: fstest.MapFS{}}
	prev := 0
	for _, file := range names { // Glob sorts, and versions are zero-padded
		name := path.Base(file)
		num, rest, ok := strings.Cut(strings.TrimSuffix(name, ".sql"), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("sqlstore: migration file %s is not NNNN_name.sql", name)
		}
		// Versions increase; gaps are allowed (parallel branches take
		// numbers of their own). The binary's schema version is the last.
		if v <= prev {
			return nil, fmt.Errorf("sqlstore: migration %s repeats or goes back from version %d", name, prev)
		}
		prev = v
		body, err := fs.ReadFile(migrationFS, file)
		if err != nil {
			return nil, err
		}
		tmpl, err := template.New(name).Option("missingkey=error").Parse(string(body))
		if err != nil {
			return nil, fmt.Errorf("sqlstore: migration %s: %w", name, err)
		}
		var sql strings.Builder
		if err := tmpl.Execute(&sql, dialects[dialect]); err != nil {
			return nil, fmt.Errorf("sqlstore: migration %s: %w", name, err)
		}
		set.list = append(set.list, Migration{Version: v, Name: rest, SQL: sql.String()})
		set.fsys[name] = &fstest.MapFile{Data: []byte(sql.String()), Mode: 0o444}
	}
	if len(set.list) == 0 {
		return nil, fmt.Errorf("sqlstore: no migrations embedded")
	}
	return set, nil
}

// LatestVersion is the schema version a binary with migrations migs needs:
// the last one's (versions may have gaps).
func LatestVersion(migs []Migration) int {
	if len(migs) == 0 {
		return 0
	}
	return migs[len(migs)-1].Version
}
