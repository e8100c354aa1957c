package sqlstore

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"
)

//go:embed migrations
var migrationFS embed.FS

// Migration is one versioned schema step.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// schemaMigration is a row of schema_migrations.
type schemaMigration struct {
	Version   int       `gorm:"primaryKey;autoIncrement:false"`
	Name      string    `gorm:"not null"`
	AppliedAt time.Time `gorm:"not null"`
}

func (schemaMigration) TableName() string { return "schema_migrations" }

// migrationLockKey is the PostgreSQL advisory lock that serializes replicas
// migrating at once ("lectern" in ASCII).
const migrationLockKey = 0x6c65637465726e

// Migrations returns the dialect's migrations in version order.
func Migrations(dialect string) ([]Migration, error) {
	dir := path.Join("migrations", dialect)
	entries, err := fs.ReadDir(migrationFS, dir)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: no migrations for %s: %w", dialect, err)
	}
	var out []Migration
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".sql") {
			continue
		}
		num, rest, ok := strings.Cut(strings.TrimSuffix(name, ".sql"), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("sqlstore: migration file %s is not NNNN_name.sql", name)
		}
		body, err := fs.ReadFile(migrationFS, path.Join(dir, name))
		if err != nil {
			return nil, err
		}
		out = append(out, Migration{Version: v, Name: rest, SQL: string(body)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	for i, m := range out {
		if m.Version != i+1 {
			return nil, fmt.Errorf("sqlstore: migrations must be numbered 1..n without gaps; found %d at position %d", m.Version, i+1)
		}
	}
	return out, nil
}

// Migrate applies every pending migration, each in its own transaction, and
// returns the names of those it applied. Replicas that start together are
// serialized (an advisory lock on PostgreSQL, the write lock on SQLite), and
// a database migrated by a newer binary is refused rather than touched.
func (s *Store) Migrate(ctx context.Context) ([]string, error) {
	migs, err := Migrations(s.dialect)
	if err != nil {
		return nil, err
	}
	var applied []string
	err = s.db.WithContext(ctx).Connection(func(conn *gorm.DB) error {
		// A fresh session: Connection's instance would carry chained
		// conditions from one statement into the next.
		conn = conn.Session(&gorm.Session{})
		if s.dialect == Postgres {
			if err := conn.Exec("SELECT pg_advisory_lock(?)", migrationLockKey).Error; err != nil {
				return err
			}
			defer conn.Exec("SELECT pg_advisory_unlock(?)", migrationLockKey)
		}
		if err := conn.Exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
			version integer PRIMARY KEY, name text NOT NULL, applied_at ` + s.timestampType() + ` NOT NULL)`).Error; err != nil {
			return err
		}
		var newest int
		if err := conn.Model(&schemaMigration{}).Select("COALESCE(MAX(version), 0)").Scan(&newest).Error; err != nil {
			return err
		}
		if newest > len(migs) {
			return fmt.Errorf("sqlstore: the database is at schema version %d, newer than this binary knows (%d); upgrade lectern", newest, len(migs))
		}
		for _, m := range migs {
			if m.Version <= newest {
				continue
			}
			err := conn.Transaction(func(tx *gorm.DB) error {
				var n int64
				if err := tx.Model(&schemaMigration{}).Where("version = ?", m.Version).Count(&n).Error; err != nil {
					return err
				}
				if n > 0 { // another process applied it while we waited
					return nil
				}
				for _, stmt := range splitStatements(m.SQL) {
					if err := tx.Exec(stmt).Error; err != nil {
						return fmt.Errorf("migration %04d_%s: %w", m.Version, m.Name, err)
					}
				}
				applied = append(applied, fmt.Sprintf("%04d_%s", m.Version, m.Name))
				return tx.Create(&schemaMigration{Version: m.Version, Name: m.Name, AppliedAt: time.Now().UTC()}).Error
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	return applied, mapErr(err)
}

// SchemaVersion returns the newest applied migration version (0: none).
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := s.db.WithContext(ctx).Model(&schemaMigration{}).Select("COALESCE(MAX(version), 0)").Scan(&v).Error
	return v, mapErr(err)
}

func (s *Store) timestampType() string {
	if s.dialect == Postgres {
		return "timestamptz"
	}
	return "datetime"
}

// splitStatements splits a migration file at semicolons that end a line,
// dropping comment-only lines. Our migrations hold no procedural bodies.
func splitStatements(src string) []string {
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
	if rest := strings.TrimSpace(cur.String()); rest != "" {
		out = append(out, rest)
	}
	return out
}
