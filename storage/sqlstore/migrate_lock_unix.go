//go:build unix

package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// fileLockPoll is how often a replica waiting for another's migration
// retries the lock.
const fileLockPoll = 10 * time.Millisecond

// lockFile takes an exclusive flock on name (created if absent), waiting
// until it is free or ctx ends. The kernel drops the lock when the returned
// release closes the file or when the process dies, so a crashed migrator
// never leaves the database locked. flock locks belong to the open file, so
// two pools in one process serialize as two processes do.
func lockFile(ctx context.Context, name string) (func() error, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: migration lock: %w", err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return f.Close, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			_ = f.Close()
			return nil, fmt.Errorf("sqlstore: migration lock %s: %w", name, err)
		}
		select {
		case <-ctx.Done():
			_ = f.Close()
			return nil, ctx.Err()
		case <-time.After(fileLockPoll):
		}
	}
}
