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

// With a high limit the lease grows with it (a fiftieth of the period's
// events), so the shared cache is asked a few times a second, not on every
// request; a client above that limit is still refused beyond the limit
// plus one lease.
func TestLeasedLimiterHighLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, cc := newLimiterTest(t)
		high := storage.Limit{Rate: 10000, Period: time.Second, Burst: 10000}
		n := 0
		// 20,000 requests in one second: twice the limit.
		for range 20000 {
			if ok, _, _ := l.Allow(context.Background(), "client", high); ok {
				n++
			}
			time.Sleep(time.Second / 20000)
		}
		if n < 10000 || n > 10000+10000+200 {
			t.Fatalf("admitted %d in the first second at twice the limit; want the burst plus the rate at most one lease (200) more", n)
		}
		if calls := cc.allows.Load(); calls > 1000 {
			t.Fatalf("%d cache calls for 20,000 requests; want about one per lease of 200 (and per refusal)", calls)
		}
		// The next two seconds at twice the limit: the rate, at most one lease more.
		n = 0
		for range 40000 {
			if ok, _, _ := l.Allow(context.Background(), "client", high); ok {
				n++
			}
			time.Sleep(time.Second / 20000)
		}
		if n < 19000 || n > 20000+200 {
			t.Fatalf("admitted %d in two seconds at twice a limit of 10,000/s; want about 20,000", n)
		}
	})
}

// slowCache answers Allow after a round trip, as Redis does.
type slowCache struct{ countingCache }

func (c *slowCache) Allow(ctx context.Context, key string, l storage.Limit) (bool, time.Duration, error) {
	time.Sleep(time.Millisecond)
	return c.countingCache.Allow(ctx, key, l)
}

// Many concurrent requests of one client within a high limit are all
// admitted: they wait for one lease fetch instead of each taking a lease
// (64 concurrent takes of a lease scaled to 50 per second would exhaust its
// burst and refuse requests within the limit).
func TestLeasedLimiterConcurrent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := cache.NewMemory(nil)
		defer mem.Close()
		sc := &slowCache{countingCache{Cache: mem}}
		l := newLeasedLimiter(sc, 5, time.Now)
		high := storage.Limit{Rate: 1000000, Period: time.Second, Burst: 1000000}
		var refused atomic.Int64
		done := make(chan struct{})
		for range 64 {
			go func() {
				defer func() { done <- struct{}{} }()
				for range 200 {
					if ok, _, err := l.Allow(context.Background(), "client", high); !ok || err != nil {
						refused.Add(1)
					}
					time.Sleep(100 * time.Microsecond)
				}
			}()
		}
		for range 64 {
			<-done
		}
		if n := refused.Load(); n != 0 {
			t.Fatalf("%d of 12,800 concurrent requests refused within a limit of 1,000,000/s", n)
		}
		if n := sc.allows.Load(); n > 200 {
			t.Fatalf("%d cache calls for 12,800 requests; want one per lease of 20,000 events or 20 ms", n)
		}
	})
}
