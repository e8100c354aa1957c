package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/database"
	"github.com/pressly/goose/v3/lock"
)

// versionTable is goose's default, so that goose's own CLI reads our
// history as it is.
const versionTable = goose.DefaultTablename

// migrationLockKey is the PostgreSQL advisory lock that serializes replicas
// migrating at once ("lectern" in ASCII). It is the key the migrator before
// goose took, so an old and a new binary migrating at once serialize too.
const migrationLockKey = 0x6c65637465726e

// advisoryLock is a goose session locker that waits on PostgreSQL's
// blocking pg_advisory_lock, as the migrator before goose did. goose's own
// (lock.NewPostgresSessionLocker) polls pg_try_advisory_lock at least a
// second apart and gives up after a bound: a replica would sleep up to a
// second after the holder finished, and fail when the holder's migration
// outlasts the bound. The wait here ends when the holder unlocks (or its
// session ends) or when ctx is cancelled.
type advisoryLock struct{ key int64 }

func (l advisoryLock) SessionLock(ctx context.Context, conn *sql.Conn) error {
	_, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", l.key)
	return err
}

func (l advisoryLock) SessionUnlock(ctx context.Context, conn *sql.Conn) error {
	var released bool
	if err := conn.QueryRowContext(ctx, "SELECT pg_advisory_unlock($1)", l.key).Scan(&released); err != nil {
		return err
	}
	if !released {
		return errors.New("sqlstore: the migration lock was not held")
	}
	return nil
}

// migrationLockSuffix names the file beside a SQLite database whose flock
// serializes the processes migrating it (lockFile).
const migrationLockSuffix = "-migrate.lock"

// querier is what catalog and version reads need: a pool, a connection or
// a transaction.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// Migrate applies every pending migration, each in its own transaction, and
// returns the names of those it applied. Replicas that start together are
// serialized (an advisory lock on PostgreSQL, a file lock beside the
// database on SQLite), a database migrated by a newer binary is refused
// rather than touched, and a history kept by the migrator before goose
// (schema_migrations) is adopted first. Afterwards the schema is checked
// against the models (CheckSchema).
func (s *Store) Migrate(ctx context.Context) (applied []string, err error) {
	if s.dialect == SQLite {
		// goose reads the version before its first transaction, so two
		// processes could both read it, and the second would apply again
		// what the first just applied whenever the migration can run twice
		// (0015 rebuilds a table). The SQLite write lock cannot span goose's
		// run without blocking goose itself, hence a lock outside the file.
		release, lerr := lockFile(ctx, s.path+migrationLockSuffix)
		if lerr != nil {
			return nil, lerr
		}
		defer func() {
			if cerr := release(); cerr != nil && err == nil {
				err = fmt.Errorf("sqlstore: migration lock: %w", cerr)
			}
		}()
	}
	return s.migrate(ctx)
}

func (s *Store) migrate(ctx context.Context) ([]string, error) {
	set, err := migrationsFor(s.dialect)
	if err != nil {
		return nil, err
	}
	known := set.latest()
	var (
		gooseDialect = database.DialectSQLite3
		locker       lock.SessionLocker
		// Versions are handed to changes ahead of time, so a database may
		// hold a newer migration before an older number lands (a gap that
		// filled later): it is applied then, not refused. Migrations touch
		// disjoint tables and columns; none depends on a later number.
		opts = []goose.ProviderOption{goose.WithLogger(goose.NopLogger()), goose.WithDisableGlobalRegistry(true),
			goose.WithAllowOutofOrder(true)}
	)
	if s.dialect == Postgres {
		gooseDialect = database.DialectPostgres
		locker = advisoryLock{key: migrationLockKey}
		opts = append(opts, goose.WithSessionLocker(locker))
	}
	store, err := database.NewStore(gooseDialect, versionTable)
	if err != nil {
		return nil, err
	}
	if err := s.adoptLegacy(ctx, store, locker, known); err != nil {
		return nil, mapErr(err)
	}
	if err := s.refuseNewer(ctx, known); err != nil {
		return nil, err
	}
	provider, err := goose.NewProvider(gooseDialect, s.sqlDB, set.fsys, opts...)
	if err != nil {
		return nil, err
	}
	applied, err := s.up(ctx, provider)
	if err != nil {
		return applied, mapErr(err)
	}
	// A newer binary may have migrated while this one waited for the lock.
	if err := s.refuseNewer(ctx, known); err != nil {
		return applied, err
	}
	return applied, s.CheckSchema(ctx)
}

// up runs goose. Where the file lock is missing (lockFile off unix), two
// processes migrating one SQLite file at once both read the version, and
// the second may wait for the write lock and then fail inside its
// transaction (the tables exist), which rolls back. Such a loser sees that
// the version moved past what it applied itself and tries again; a failure
// with no progress by anyone is real.
func (s *Store) up(ctx context.Context, p *goose.Provider) ([]string, error) {
	var applied []string
	for {
		before, err := s.schemaVersion(ctx, s.sqlDB)
		if err != nil {
			return applied, err
		}
		results, err := p.Up(ctx)
		var partial *goose.PartialError
		if errors.As(err, &partial) {
			results = partial.Applied
		}
		for _, r := range results {
			applied = append(applied, strings.TrimSuffix(path.Base(r.Source.Path), ".sql"))
		}
		if err == nil || s.dialect != SQLite {
			return applied, err
		}
		after, verr := s.schemaVersion(ctx, s.sqlDB)
		if verr != nil || after <= before+len(results) {
			return applied, fmt.Errorf("sqlstore: migrate: %w", err)
		}
	}
}

func (s *Store) refuseNewer(ctx context.Context, known int) error {
	v, err := s.schemaVersion(ctx, s.sqlDB)
	if err != nil {
		return err
	}
	if v > known {
		return fmt.Errorf("sqlstore: the database is at schema version %d, newer than this binary knows (%d); upgrade lectern", v, known)
	}
	return nil
}

// SchemaVersion returns the newest applied migration version (0: none). It
// reads and never writes: the history may still be in schema_migrations
// (a database the migrator before goose made, not yet adopted).
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	return s.schemaVersion(ctx, s.sqlDB)
}

func (s *Store) schemaVersion(ctx context.Context, q querier) (int, error) {
	v := 0
	for _, t := range []struct{ table, query string }{
		{versionTable, "SELECT COALESCE(MAX(version_id), 0) FROM " + versionTable},
		{legacyTable, fmt.Sprintf("SELECT COALESCE(MAX(version), 0) FROM %s WHERE version <> %d", legacyTable, legacyTombstone)},
	} {
		ok, err := s.tableExists(ctx, q, t.table)
		if err != nil {
			return 0, mapErr(err)
		}
		if !ok {
			continue
		}
		var n int
		if err := q.QueryRowContext(ctx, t.query).Scan(&n); err != nil {
			return 0, mapErr(err)
		}
		v = max(v, n)
	}
	return v, nil
}

// tableExists looks in the schema the connection resolves names in (the
// search_path on PostgreSQL), where unqualified statements create tables.
func (s *Store) tableExists(ctx context.Context, q querier, table string) (bool, error) {
	query := "SELECT to_regclass($1) IS NOT NULL"
	if s.dialect == SQLite {
		query = "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?)"
	}
	var ok bool
	err := q.QueryRowContext(ctx, query, table).Scan(&ok)
	return ok, err
}
