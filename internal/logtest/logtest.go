package logtest

import (
	"bytes"
	"io"
	"log/slog"
	"sync"
	"testing"
)

// Buffer holds what a test's logger wrote. It is safe for concurrent use.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	out io.Writer // the test's output; nil once the test has ended
}

// New returns a debug-level text logger writing to tb's output and to the
// returned Buffer. Lines logged after tb's cleanup (by a goroutine the test
// left behind) go to the Buffer only: once no enclosing test runs, a write
// to the test's output panics.
func New(tb testing.TB) (*slog.Logger, *Buffer) {
	b := &Buffer{out: tb.Output()}
	tb.Cleanup(func() {
		b.mu.Lock()
		b.out = nil
		b.mu.Unlock()
	})
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug})), b
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.out != nil {
		_, _ = b.out.Write(p)
	}
	return b.buf.Write(p)
}

// String returns everything logged so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
