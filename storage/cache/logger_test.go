package cache

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// go-redis's own lines (here: a server that cannot be dialled) go through
// the process's slog logger at WARN, one JSON object a line, not as plain
// text on stderr.
func TestRedisLogsThroughSlog(t *testing.T) {
	var logs lockedBuffer
	SetRedisLogger(slog.New(slog.NewJSONHandler(&logs, nil)))
	t.Cleanup(func() { SetRedisLogger(slog.New(slog.DiscardHandler)) })
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", DialerRetries: 1, MaxRetries: -1, DialTimeout: time.Second})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err == nil {
		t.Fatal("a ping to 127.0.0.1:1 succeeded")
	}
	out := strings.TrimSpace(logs.String())
	if !strings.Contains(out, "failed to dial") {
		t.Fatalf("go-redis's dial failure is not in the slog output: %q", out)
	}
	for _, line := range strings.Split(out, "\n") {
		var rec struct{ Level, Msg string }
		if err := json.Unmarshal([]byte(line), &rec); err != nil || rec.Level != "WARN" || !strings.HasPrefix(rec.Msg, "redis: ") {
			t.Errorf("line %q: %v; want a JSON WARN record whose message starts with \"redis: \"", line, err)
		}
	}
}
