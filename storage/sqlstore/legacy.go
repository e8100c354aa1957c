package sqlstore

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/pressly/goose/v3/database"
	"github.com/pressly/goose/v3/lock"
)

// The migrator before goose recorded versions in schema_migrations
// (version, name, applied_at); versions 1..5 are the same files goose runs
// now, so a database it made is adopted by copying its versions into
// goose's table instead of running anything.
const (
	legacyTable = "schema_migrations"
	// legacyTombstone is recorded in schema_migrations once its history has
	// moved: a binary from before goose reads it as a schema newer than it
	// knows and refuses to run, rather than re-applying 0001 or serving a
	// schema whose later versions it cannot see.
	legacyTombstone = math.MaxInt32
)

// adoptLegacy copies schema_migrations into goose's version table, once,
// in one transaction, under the migration lock (PostgreSQL) or the write
// lock (SQLite: immediate transactions), so replicas that start together
// adopt it once.
func (s *Store) adoptLegacy(ctx context.Context, store database.Store, locker lock.SessionLocker, known int) (err error) {
	exists, err := s.tableExists(ctx, s.sqlDB, legacyTable)
	if err != nil || !exists {
		return err
	}
	conn, err := s.sqlDB.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if locker != nil {
		if err := locker.SessionLock(ctx, conn); err != nil {
			return fmt.Errorf("sqlstore: migration lock: %w", err)
		}
		defer func() {
			if uerr := locker.SessionUnlock(context.WithoutCancel(ctx), conn); uerr != nil && err == nil {
				err = uerr
			}
		}()
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() // a no-op after Commit
	var newest int
	if err := tx.QueryRowContext(ctx, "SELECT COALESCE(MAX(version), 0) FROM "+legacyTable).Scan(&newest); err != nil {
		return err
	}
	switch {
	case newest == legacyTombstone: // adopted already
		return nil
	case newest > known:
		return fmt.Errorf("sqlstore: the database is at schema version %d, newer than this binary knows (%d); upgrade lectern", newest, known)
	}
	var versions []int64
	rows, err := tx.QueryContext(ctx, "SELECT version FROM "+legacyTable+" ORDER BY version")
	if err != nil {
		return err
	}
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			rows.Close()
			return err
		}
		versions = append(versions, v)
	}
	if err := rows.Close(); err != nil {
		return err
	}
	ok, err := s.tableExists(ctx, tx, versionTable)
	if err != nil {
		return err
	}
	if !ok {
		if err := store.CreateVersionTable(ctx, tx); err != nil {
			return err
		}
		if err := store.Insert(ctx, tx, database.InsertRequest{Version: 0}); err != nil {
			return err
		}
	}
	recorded, err := store.ListMigrations(ctx, tx)
	if err != nil {
		return err
	}
	have := map[int64]bool{}
	for _, r := range recorded {
		have[r.Version] = true
	}
	for _, v := range versions {
		if !have[v] {
			if err := store.Insert(ctx, tx, database.InsertRequest{Version: v}); err != nil {
				return err
			}
		}
	}
	insert := "INSERT INTO " + legacyTable + " (version, name, applied_at) VALUES ($1, $2, $3)"
	if s.dialect == SQLite {
		insert = "INSERT INTO " + legacyTable + " (version, name, applied_at) VALUES (?, ?, ?)"
	}
	if _, err := tx.ExecContext(ctx, insert, legacyTombstone, "moved to "+versionTable, time.Now().UTC()); err != nil {
		return err
	}
	return tx.Commit()
}
