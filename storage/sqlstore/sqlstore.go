package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/glebarez/sqlite"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"go.opentelemetry.io/otel/trace"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/lectern/lectern/storage"
)

// Dialects.
const (
	Postgres = "postgres"
	SQLite   = "sqlite"
)

// Options tunes Open. A nil *Options means defaults.
type Options struct {
	// Logger receives slow-query warnings. Nil discards them.
	Logger *slog.Logger
	// MaxOpenConns bounds the pool (PostgreSQL). Default 32.
	MaxOpenConns int
	// SlowQuery is the threshold for slow-query warnings. Default 200ms.
	SlowQuery time.Duration
	// OnStatement, if set, sees the text of every statement sent to
	// PostgreSQL (gorm's and those sent on database/sql directly) before it
	// runs. The test that every query on a distributed table carries its
	// site (docs/SCALE.md) records them with it.
	OnStatement func(sql string)
	// TracerProvider receives a span per gorm statement (without the
	// statements' values). Nil: the global provider, a no-op unless
	// tracing is configured.
	TracerProvider trace.TracerProvider
}

// Store implements storage.Store on gorm.
type Store struct {
	db      *gorm.DB
	sqlDB   *sql.DB // the same pool, for the hot statements gorm would slow
	dialect string
	// SQLite only: the database file, beside which Migrate takes its lock.
	path string
	// PostgreSQL only: a small pool (keyConns) for the token path's batched writes
	// (rotation, new grants), whose sessions plan without sequential
	// scans; elsewhere (SQLite) the same pool as sqlDB. See keyLookups.
	keyDB *sql.DB
	idle  int         // sqlDB's idle connections (PostgreSQL)
	drop  atomic.Bool // dropIdle under way

	// PostgreSQL only: concurrent token-path writes share statements.
	rotations *batcher[rotateReq, rotateRes]
	grants    *batcher[grantReq, struct{}]
	closeOnce sync.Once
}

var _ storage.Store = (*Store)(nil)

// Open connects to dsn: a postgres:// or postgresql:// URL, or
// sqlite:<path> for an embedded database file (created if absent). It does
// not migrate; call Migrate. A database at this binary's schema version is
// checked against the models (CheckSchema) before Open returns.
func Open(ctx context.Context, dsn string, opts *Options) (*Store, error) {
	if opts == nil {
		opts = &Options{}
	}
	cfg := &gorm.Config{
		SkipDefaultTransaction: true,
		TranslateError:         true,
		NowFunc:                func() time.Time { return time.Now().UTC() },
		Logger:                 logger.Discard,
	}
	if opts.Logger != nil {
		slow := opts.SlowQuery
		if slow == 0 {
			slow = 200 * time.Millisecond
		}
		cfg.Logger = gormLogger{l: opts.Logger, slow: slow}
	}
	var (
		dialector gorm.Dialector
		dialect   string
		keyDB     *sql.DB
		tracer    *connTracer
		file      string
	)
	switch {
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		dialect = Postgres
		pc, err := pgx.ParseConfig(withGenericPlans(dsn))
		if err != nil {
			return nil, fmt.Errorf("sqlstore: %w", err)
		}
		tracer = &connTracer{onStatement: opts.OnStatement}
		pc.Tracer = tracer
		dialector = postgres.New(postgres.Config{Conn: stdlib.OpenDB(*pc)})
		keyDB = keyLookups(pc)
	case strings.HasPrefix(dsn, "sqlite:"):
		path := strings.TrimPrefix(dsn, "sqlite:")
		if path == "" {
			return nil, errors.New("sqlstore: a sqlite URL needs a file path (sqlite:<path>)")
		}
		if dir := filepath.Dir(path); dir != "." {
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return nil, fmt.Errorf("sqlstore: %w", err)
			}
		}
		// WAL lets readers run beside the one writer; immediate transactions
		// take the write lock up front, so two writers queue on busy_timeout
		// instead of failing with SQLITE_BUSY on lock upgrade.
		dialector = sqlite.Open("file:" + path + "?_txlock=immediate&_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)")
		dialect, file = SQLite, path
	default:
		return nil, errors.New("sqlstore: DATABASE_URL must be a postgres:// or postgresql:// URL, or sqlite:<path>")
	}
	db, err := gorm.Open(dialector, cfg)
	if err != nil {
		if keyDB != nil {
			_ = keyDB.Close()
		}
		return nil, fmt.Errorf("sqlstore: open %s: %w", dialect, mapErr(err))
	}
	if err := db.Use(newTracingPlugin(opts.TracerProvider, dialect)); err != nil {
		return nil, fmt.Errorf("sqlstore: tracing: %w", err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, err
	}
	n := opts.MaxOpenConns
	if dialect == Postgres {
		if n == 0 {
			n = 32
		}
		sqlDB.SetMaxOpenConns(n)
		sqlDB.SetMaxIdleConns(n)
		sqlDB.SetConnMaxIdleTime(5 * time.Minute)
	} else {
		sqlDB.SetMaxOpenConns(8)
	}
	if keyDB == nil {
		keyDB = sqlDB
	}
	s := &Store{db: db, sqlDB: sqlDB, keyDB: keyDB, dialect: dialect, path: file}
	if tracer != nil {
		s.idle = n
		drop := s.dropIdle
		tracer.lost.Store(&drop)
	}
	if dialect == Postgres {
		s.rotations = newBatcher(rotateWorkers, batchMax, s.rotateBatch)
		s.grants = newBatcher(grantWorkers, batchMax, s.createGrantsBatch)
	}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := s.Ping(pctx); err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("sqlstore: connect %s: %w", dialect, err)
	}
	if err := s.checkIfCurrent(ctx); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

// checkIfCurrent runs CheckSchema at start-up on a database at this
// binary's schema version. An older one is checked by Migrate once it has
// migrated (or refused by serve), a newer one is another binary's to check.
func (s *Store) checkIfCurrent(ctx context.Context) error {
	set, err := migrationsFor(s.dialect)
	if err != nil {
		return err
	}
	v, err := s.schemaVersion(ctx, s.sqlDB)
	if err != nil || v != set.latest() {
		return err
	}
	return s.CheckSchema(ctx)
}

// BatchLatency is how long the token path's batched writes kept their
// callers waiting, by batch: "grants" (code exchanges) and "rotations"
// (refreshes). Nil on SQLite, which does not batch.
func (s *Store) BatchLatency() map[string]storage.LatencySnapshot {
	if s.grants == nil {
		return nil
	}
	return map[string]storage.LatencySnapshot{"grants": s.grants.wait.Snapshot(), "rotations": s.rotations.wait.Snapshot()}
}

// Dialect returns Postgres or SQLite.
func (s *Store) Dialect() string { return s.dialect }

// Ping reports whether the database answers.
func (s *Store) Ping(ctx context.Context) error {
	sqlDB, err := s.db.DB()
	if err != nil {
		return err
	}
	return mapErr(sqlDB.PingContext(ctx))
}

// Close stops the batchers and closes the pool. Closing twice is harmless.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		if s.rotations != nil {
			s.rotations.close()
			s.grants.close()
		}
	})
	if s.keyDB != s.sqlDB {
		_ = s.keyDB.Close()
	}
	sqlDB, err := s.db.DB()
	if err != nil {
		return err
	}
	return sqlDB.Close()
}

// connTracer sees every statement of both PostgreSQL pools: it reports
// each to Options.OnStatement (tests) and, when a statement failed because
// its connection is gone, has the store drop the idle connections of both
// pools (dropIdle).
type connTracer struct {
	onStatement func(string)
	lost        atomic.Pointer[func()]
}

func (t *connTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if t.onStatement != nil {
		t.onStatement(d.SQL)
	}
	return ctx
}

func (t *connTracer) TraceQueryEnd(ctx context.Context, c *pgx.Conn, d pgx.TraceQueryEndData) {
	if d.Err == nil || !c.IsClosed() || ctx.Err() != nil || errors.Is(d.Err, context.Canceled) || errors.Is(d.Err, context.DeadlineExceeded) {
		return
	}
	if lost := t.lost.Load(); lost != nil {
		(*lost)()
	}
}

// dropIdle closes the idle connections of both pools. A connection that
// died (PostgreSQL restarted, failed over, a proxy cut it) is found only by
// using it, and each such use answers 503: once one is found dead, the
// others that sat idle beside it almost surely are too, so they are closed
// and the next requests open new ones. Before the token path had a pool of
// its own the code exchange's retries happened to use up the general pool's
// dead connections; now its retries succeed on the key pool while the
// general pool still holds them (TestCodeExchangeRetryAfterDatabaseFailure).
func (s *Store) dropIdle() {
	if !s.drop.CompareAndSwap(false, true) {
		return
	}
	defer s.drop.Store(false)
	s.sqlDB.SetMaxIdleConns(0)
	s.sqlDB.SetMaxIdleConns(s.idle)
	if s.keyDB != s.sqlDB {
		s.keyDB.SetMaxIdleConns(0)
		s.keyDB.SetMaxIdleConns(keyConns)
	}
}

// keyLookups opens the pool of the batched token-path writes: one
// connection per batch worker (keyConns), each session planning without sequential
// scans, hash joins or merge joins.
//
// Every statement there joins a handful of requested keys (unnest of the
// batch's arrays) to rows found by a unique key (a token hash, a grant id):
// a nested loop of index lookups is the only good plan. Plans are generic
// (withGenericPlans) and made once per connection, so a connection that
// first ran a statement while its tables were small (a new deployment, a new
// database) kept a hash join over a sequential scan of refresh_tokens for as
// long as it lived, unless an ANALYZE happened to invalidate it: measured on
// a fresh database under the refresh benchmark, 5.3 ms per batch of 10
// rotations, 19,000 rows read per scan (docs/PERFORMANCE.md). With only
// sequential scans off, the planner kept the hash join and read the whole
// index instead (11.5 ms per batch). Off, these are costed out of reach
// whenever an index can answer; the statements are otherwise unchanged.
func keyLookups(pc *pgx.ConnConfig) *sql.DB {
	kc := pc.Copy()
	if kc.RuntimeParams == nil {
		kc.RuntimeParams = map[string]string{}
	}
	for _, scan := range []string{"enable_seqscan", "enable_hashjoin", "enable_mergejoin"} {
		kc.RuntimeParams[scan] = "off"
	}
	db := stdlib.OpenDB(*kc)
	db.SetMaxOpenConns(keyConns)
	db.SetMaxIdleConns(keyConns)
	db.SetConnMaxIdleTime(5 * time.Minute)
	return db
}

// withGenericPlans asks PostgreSQL to plan our prepared statements once per
// connection (unless the URL says otherwise): they are small OLTP statements
// whose plans do not depend on the values, and re-planning them cost 18% of
// refresh throughput (docs/PERFORMANCE.md).
func withGenericPlans(dsn string) string {
	if strings.Contains(dsn, "plan_cache_mode=") {
		return dsn
	}
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	return dsn + sep + "plan_cache_mode=force_generic_plan"
}

// mapErr translates driver errors to the storage errors the edges map:
// no row → ErrNotFound, unique violation → ErrConflict, lost connection →
// ErrUnavailable (answered 503). Anything else passes through.
func mapErr(err error) error {
	if err == nil {
		return nil
	}
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		return storage.ErrNotFound
	case errors.Is(err, gorm.ErrDuplicatedKey), isPgCode(err, "23505"):
		return fmt.Errorf("%w: %v", storage.ErrConflict, err)
	case unavailable(err):
		return fmt.Errorf("%w: %v", storage.ErrUnavailable, err)
	}
	return err
}

// isPgCode reports whether err is a PostgreSQL error with SQLSTATE code
// (errors of the statements run on database/sql skip gorm's translation).
func isPgCode(err error, code string) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == code
}

func unavailable(err error) bool {
	var (
		netErr  net.Error
		connErr *pgconn.ConnectError
		pgErr   *pgconn.PgError
	)
	switch {
	case errors.As(err, &connErr), errors.As(err, &netErr),
		errors.Is(err, driver.ErrBadConn), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, context.DeadlineExceeded), pgconn.Timeout(err):
		return true
	case errors.As(err, &pgErr):
		// Class 08: connection exception; 57P0x: shutdown, cannot connect now.
		return strings.HasPrefix(pgErr.Code, "08") || strings.HasPrefix(pgErr.Code, "57P")
	}
	msg := err.Error()
	return strings.Contains(msg, "conn closed") || strings.Contains(msg, "connection refused") ||
		strings.Contains(msg, "database is closed")
}

// Exec runs a statement outside any tenant scope. It exists for operators'
// tooling and tests (creating schemas); request paths never call it.
func (s *Store) Exec(ctx context.Context, sql string, args ...any) error {
	return mapErr(s.db.WithContext(ctx).Exec(sql, args...).Error)
}
