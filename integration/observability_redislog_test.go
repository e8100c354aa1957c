package integration

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// With --log-format json every line the process logs is JSON, go-redis's
// own too (a Redis that cannot be reached: its failed dials), which wrote
// plain text to stderr.
func TestRedisLinesFollowTheLogFormat(t *testing.T) {
	bin := buildLectern(t)
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--log-format", "json",
		"--redis-url", "redis://:x@127.0.0.1:1/7", "--shutdown-delay", "0s")
	cmd.Env = append(os.Environ(), "LECTERN_DEMO_SEED=false")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	_ = cmd.Run() // the unreachable Redis stops it
	var redisLines int
	for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		if strings.HasPrefix(line, "lectern serve: ") {
			continue // the command's own error, after the log
		}
		var rec struct{ Level, Msg string }
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Errorf("a log line is not JSON: %q", line)
			continue
		}
		if strings.HasPrefix(rec.Msg, "redis: ") {
			redisLines++
			if rec.Level != "WARN" {
				t.Errorf("go-redis line at %s: %q; want WARN", rec.Level, line)
			}
		}
	}
	if redisLines == 0 {
		t.Fatalf("no go-redis line among:\n%s", stderr.String())
	}
}
