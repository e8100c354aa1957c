package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// gormLogger logs failed and slow statements and nothing else. Unlike
// gorm's own loggers it builds the SQL text only for what it logs (they
// format every statement), and it never logs parameter values: those
// include token hashes.
type gormLogger struct {
	l    *slog.Logger
	slow time.Duration
}

var (
	_ logger.Interface  = gormLogger{}
	_ gorm.ParamsFilter = gormLogger{}
)

func (g gormLogger) LogMode(logger.LogLevel) logger.Interface { return g }

func (g gormLogger) Info(ctx context.Context, msg string, args ...any) {}

// Warn and Error receive a printf format and its arguments from gorm
// ("failed to initialize database, got error %v").
func (g gormLogger) Warn(ctx context.Context, msg string, args ...any) {
	g.l.WarnContext(ctx, "gorm: "+fmt.Sprintf(msg, args...))
}

func (g gormLogger) Error(ctx context.Context, msg string, args ...any) {
	g.l.ErrorContext(ctx, "gorm: "+fmt.Sprintf(msg, args...))
}

// Trace implements logger.Interface.
func (g gormLogger) Trace(ctx context.Context, begin time.Time, fc func() (string, int64), err error) {
	elapsed := time.Since(begin)
	switch {
	case err != nil && isDuplicate(err):
		// A unique violation is storage.ErrConflict, an answer the caller
		// maps (a taken slug, a second account for one address), not a
		// failure: the edge reports it, once.
		sql, _ := fc()
		g.l.DebugContext(ctx, "sql conflict", "sql", shortSQL(sql), "duration", elapsed, "err", err)
	case err != nil && !errors.Is(err, gorm.ErrRecordNotFound) && !errors.Is(err, context.Canceled):
		sql, _ := fc()
		g.l.ErrorContext(ctx, "sql failed", "sql", shortSQL(sql), "duration", elapsed, "err", err)
	case elapsed > g.slow:
		sql, rows := fc()
		g.l.WarnContext(ctx, "slow sql", "sql", shortSQL(sql), "duration", elapsed, "rows", rows)
	}
}

// maxLoggedSQL bounds the statement text in a log line: a batched insert
// (a site import stores 500 sites in one) runs to tens of kilobytes of
// placeholders.
const maxLoggedSQL = 500

func shortSQL(sql string) string {
	if len(sql) <= maxLoggedSQL {
		return sql
	}
	return sql[:maxLoggedSQL] + fmt.Sprintf("... (%d bytes)", len(sql))
}

// ParamsFilter keeps values out of the SQL text given to Trace.
func (g gormLogger) ParamsFilter(ctx context.Context, sql string, params ...any) (string, []any) {
	return sql, nil
}

// Note: gorm's Scan reports its SQL through a recorder that inlines the
// values (logger.RecorderParamsFilter, a package global we leave alone), so
// queries of user data use Find, whose statements reach ParamsFilter.

// isDuplicate reports whether err is a unique violation (mapErr's
// storage.ErrConflict).
func isDuplicate(err error) bool {
	return errors.Is(err, gorm.ErrDuplicatedKey) || isPgCode(err, "23505")
}
