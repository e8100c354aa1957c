package sqlstore

import (
	"context"
	"errors"
	"fmt"
)

// ErrReadOnly: the database answers but refuses writes (a standby after a
// failover, a read-only transaction default, a read-only SQLite file).
var ErrReadOnly = errors.New("sqlstore: the database is read-only")

// Writable reports whether the database would take a write now: it
// answers, and (PostgreSQL) is not a standby and not read-only by default,
// or (SQLite) is not opened read-only. One round trip and no write, so
// readiness probes may call it every second; a full disk is not seen.
func (s *Store) Writable(ctx context.Context) error {
	var (
		standby  bool
		readOnly string
	)
	switch s.dialect {
	case Postgres:
		if err := s.sqlDB.QueryRowContext(ctx, "SELECT pg_is_in_recovery(), current_setting('transaction_read_only')").
			Scan(&standby, &readOnly); err != nil {
			return mapErr(err)
		}
	default:
		var queryOnly int
		if err := s.sqlDB.QueryRowContext(ctx, "PRAGMA query_only").Scan(&queryOnly); err != nil {
			return mapErr(err)
		}
		if queryOnly != 0 {
			readOnly = "on"
		}
	}
	switch {
	case standby:
		return fmt.Errorf("%w: it is a standby (in recovery)", ErrReadOnly)
	case readOnly == "on":
		return fmt.Errorf("%w: transactions are read-only", ErrReadOnly)
	}
	return nil
}
