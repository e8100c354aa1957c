package authserver

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/storage/cache"
)

// countingCache counts Allow calls on a real in-memory cache.
type countingCache struct {
	storage.Cache
	allows atomic.Int64
}

func (c *countingCache) Allow(ctx context.Context, key string, l storage.Limit) (bool, time.Duration, error) {
	c.allows.Add(1)
	return c.Cache.Allow(ctx, key, l)
}

// newLimiterTest runs inside a synctest bubble: the limiter and the
// memory cache read the real time package, whose clock the test moves with
// time.Sleep.
func newLimiterTest(t *testing.T) (*leasedLimiter, *countingCache) {
	mem := cache.NewMemory(nil)
	t.Cleanup(func() { mem.Close() })
	cc := &countingCache{Cache: mem}
	return newLeasedLimiter(cc, 5, time.Now), cc
}

var thirtyPerSecond = storage.Limit{Rate: 30, Period: time.Second, Burst: 30}

// A client at the limit (30/s, evenly spaced) is never refused, and the
// shared cache is asked once per lease, not once per request.
func TestLeasedLimiterAdmitsTheLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, cc := newLimiterTest(t)
		for i := range 300 {
			ok, _, err := l.Allow(context.Background(), "client", thirtyPerSecond)
			if err != nil || !ok {
				t.Fatalf("request %d at 30/s refused (%v)", i, err)
			}
			time.Sleep(time.Second / 30)
		}
		if n := cc.allows.Load(); n > 70 {
			t.Fatalf("%d cache calls for 300 requests; want about one per lease of 5", n)
		}
	})
}

// A client far above the limit is refused. GCRA admits the burst (30) and
// then the rate (30/s); leases may add one lease (5) per replica.
func TestLeasedLimiterRefusesExcess(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, _ := newLimiterTest(t)
		admitted := func(seconds int) int {
			n := 0
			for range 300 * seconds {
				if ok, retry, _ := l.Allow(context.Background(), "client", thirtyPerSecond); ok {
					n++
				} else if retry <= 0 {
					t.Fatal("a refusal without Retry-After")
				}
				time.Sleep(time.Second / 300)
			}
			return n
		}
		if n := admitted(1); n < 55 || n > 30+30+5 {
			t.Fatalf("first second at 300/s: admitted %d; want the burst plus a second of rate (60) at most one lease more", n)
		}
		if n := admitted(2); n < 55 || n > 60+5 {
			t.Fatalf("next two seconds at 300/s: admitted %d; want the rate (60) at most one lease more", n)
		}
		if ok, _, _ := l.Allow(context.Background(), "other", thirtyPerSecond); !ok {
			t.Fatal("another client was refused: limits are per key")
		}
	})
}

// Sporadic requests (slower than a lease lasts) are admitted too.
func TestLeasedLimiterSporadic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, _ := newLimiterTest(t)
		for i := range 50 {
			if ok, _, _ := l.Allow(context.Background(), "client", thirtyPerSecond); !ok {
				t.Fatalf("sporadic request %d refused", i)
			}
			time.Sleep(200 * time.Millisecond)
		}
	})
}
