package cache_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/storage/cache"
)

// outage is a cache whose deletes fail while down is set, as during a
// Redis outage; everything else reaches the real in-memory cache.
type outage struct {
	*cache.Memory
	down atomic.Bool
}

func (o *outage) Delete(ctx context.Context, keys ...string) error {
	if o.down.Load() {
		return storage.ErrUnavailable
	}
	return o.Memory.Delete(ctx, keys...)
}

// A key that could not be deleted during an outage is deleted once the
// cache answers again, not left to live out its TTL; a key whose TTL ends
// during the outage is given up.
func TestDeleterRetriesAfterAnOutage(t *testing.T) {
	ctx := context.Background()
	c := &outage{Memory: cache.NewMemory(nil)}
	defer c.Close()
	for _, k := range []string{"roles", "marker", "short"} {
		if err := c.Set(ctx, k, []byte("stale"), time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	d := storage.NewDeleter(c, nil)
	d.Interval = 20 * time.Millisecond
	c.down.Store(true)
	if err := d.Delete(ctx, time.Minute, "roles", "marker"); !errors.Is(err, storage.ErrUnavailable) {
		t.Fatalf("Delete during the outage: %v; want the cache's error", err)
	}
	if err := d.Delete(ctx, 30*time.Millisecond, "short"); err == nil {
		t.Fatal("Delete during the outage succeeded")
	}
	time.Sleep(100 * time.Millisecond)
	if d.Pending() != 2 {
		t.Fatalf("%d keys pending during the outage; want 2 (the short one given up)", d.Pending())
	}
	c.down.Store(false)
	deadline := time.Now().Add(5 * time.Second)
	for d.Pending() > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	for _, k := range []string{"roles", "marker"} {
		if _, err := c.Get(ctx, k); !errors.Is(err, storage.ErrCacheMiss) {
			t.Errorf("%s after the outage: %v; want it deleted", k, err)
		}
	}
	if _, err := c.Get(ctx, "short"); err != nil {
		t.Errorf("the given-up key: %v; want it left to its own TTL", err)
	}
}
