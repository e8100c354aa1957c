package cache

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/redis/go-redis/v9"
)

// SetRedisLogger sends go-redis's own log lines (failed dials, Sentinel
// and Cluster state, pool warnings) through l at WARN, so that they keep
// the process's log format (one JSON object a line with --log-format
// json) and carry the request id and site when go-redis logs with a
// request's context. Without it go-redis writes plain text to stderr,
// during the outages an operator most needs to read. go-redis has one
// logger per process: the last call wins.
func SetRedisLogger(l *slog.Logger) {
	if l == nil {
		return
	}
	redis.SetLogger(redisLogger{l})
}

// redisLogger adapts an slog.Logger to go-redis's logging interface.
type redisLogger struct{ l *slog.Logger }

func (r redisLogger) Printf(ctx context.Context, format string, v ...any) {
	if ctx == nil {
		ctx = context.Background()
	}
	msg := strings.TrimSpace(fmt.Sprintf(format, v...))
	if !strings.HasPrefix(msg, "redis: ") {
		msg = "redis: " + msg
	}
	r.l.LogAttrs(ctx, slog.LevelWarn, msg)
}
