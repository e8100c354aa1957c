package storage

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Deleter deletes cache keys that could not be deleted when they had to be
// (the cache was unreachable), by retrying in the background until the
// delete succeeds or the keys have expired by themselves. A stale copy
// (cached roles and claims after a role change) then outlives the outage
// by one retry interval, not by its whole time to live. One goroutine runs while anything is pending.
type Deleter struct {
	cache Cache
	log   *slog.Logger
	// Interval is the pause between attempts (default one second).
	Interval time.Duration

	mu      sync.Mutex
	pending map[string]time.Time // key → when it expires anyway
	running bool
}

// NewDeleter returns a Deleter for c; log may be nil.
func NewDeleter(c Cache, log *slog.Logger) *Deleter {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Deleter{cache: c, log: log, Interval: time.Second, pending: map[string]time.Time{}}
}

// Delete deletes keys, now if it can, else as soon as the cache answers
// again; keys that would have expired within ttl are given up after ttl.
func (d *Deleter) Delete(ctx context.Context, ttl time.Duration, keys ...string) error {
	err := d.cache.Delete(ctx, keys...)
	if err == nil {
		return nil
	}
	until := time.Now().Add(ttl)
	d.mu.Lock()
	for _, k := range keys {
		if until.After(d.pending[k]) {
			d.pending[k] = until
		}
	}
	start := !d.running
	d.running = true
	d.mu.Unlock()
	if start {
		go d.retry()
	}
	return err
}

// Pending returns how many keys wait to be deleted.
func (d *Deleter) Pending() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.pending)
}

func (d *Deleter) retry() {
	for {
		time.Sleep(d.Interval)
		d.mu.Lock()
		now := time.Now()
		keys := make([]string, 0, len(d.pending))
		for k, until := range d.pending {
			if now.After(until) {
				delete(d.pending, k)
				continue
			}
			keys = append(keys, k)
		}
		if len(keys) == 0 {
			d.running = false
			d.mu.Unlock()
			return
		}
		d.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err := d.cache.Delete(ctx, keys...)
		cancel()
		if err != nil {
			continue
		}
		d.log.Info("cache keys deleted after the cache came back", "keys", len(keys))
		d.mu.Lock()
		for _, k := range keys {
			delete(d.pending, k)
		}
		d.mu.Unlock()
	}
}
