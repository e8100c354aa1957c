package authserver

import (
	"context"
	"sync"
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

func (c *countingCache) AllowAtMost(ctx context.Context, key string, l storage.Limit, n int) (int, time.Duration, error) {
	c.allows.Add(1)
	return c.Cache.AllowAtMost(ctx, key, l, n)
}

// newLimiterTest runs inside a synctest bubble: the limiter and the
// memory cache read the real time package, whose clock the test moves with
// time.Sleep.
func newLimiterTest(t *testing.T) (*leasedLimiter, *countingCache) {
	mem := cache.NewMemory(nil)
	t.Cleanup(func() { mem.Close() })
	cc := &countingCache{Cache: mem}
	return newLeasedLimiter(cc, 64, time.Now), cc
}

var thirtyPerSecond = storage.Limit{Rate: 30, Period: time.Second, Burst: 30}

// A client at the limit (30/s, evenly spaced) is never refused, and the
// shared cache is asked once per lease (at most Burst/10 = 3 events at
// this limit), not once per request.
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
		if n := cc.allows.Load(); n > 120 {
			t.Fatalf("%d cache calls for 300 requests; want about one per lease of 3", n)
		}
	})
}

// A client far above the limit is refused. GCRA admits the burst (30) and
// then the rate (30/s); leases may add one lease (3) per replica.
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
		if n := admitted(1); n < 55 || n > 30+30+3 {
			t.Fatalf("first second at 300/s: admitted %d; want the burst plus a second of rate (60) at most one lease more", n)
		}
		if n := admitted(2); n < 55 || n > 60+3 {
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

// replicas are n limiters (one per replica) sharing one cache.
func replicas(t *testing.T, n int) ([]*leasedLimiter, *countingCache) {
	mem := cache.NewMemory(nil)
	t.Cleanup(func() { mem.Close() })
	cc := &countingCache{Cache: mem}
	ls := make([]*leasedLimiter, n)
	for i := range ls {
		ls[i] = newLeasedLimiter(cc, 64, time.Now)
	}
	return ls, cc
}

// A client that a load balancer spreads over three replicas is admitted up
// to its limit: at 90% of the default limit (27/s, each replica seeing it
// 9 times a second) nothing is refused. Leases that expired unused (the
// earlier design) refused this client at about 18/s.
func TestLeasedLimiterAcrossReplicasAdmitsTheLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ls, _ := replicas(t, 3)
		for i := range 27 * 10 {
			if ok, _, err := ls[i%3].Allow(context.Background(), "client", thirtyPerSecond); err != nil || !ok {
				t.Fatalf("request %d at 27/s over three replicas refused (%v)", i, err)
			}
			time.Sleep(time.Second / 27)
		}
	})
}

// The same at a raised limit (10^5/s) and 3,000 requests a second over
// three replicas: nothing refused, and leases grow so that the cache sees
// a small fraction of the requests.
func TestLeasedLimiterAcrossReplicasAtARaisedLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ls, cc := replicas(t, 3)
		raised := storage.Limit{Rate: 100000, Period: time.Second, Burst: 100000}
		const total = 3000 * 2
		for i := range total {
			if ok, _, err := ls[i%3].Allow(context.Background(), "client", raised); err != nil || !ok {
				t.Fatalf("request %d at 3,000/s over three replicas refused (%v)", i, err)
			}
			time.Sleep(time.Second / 3000)
		}
		if n := cc.allows.Load(); n > total/10 {
			t.Fatalf("%d cache calls for %d requests; want leases to absorb most of them", n, total)
		}
	})
}

// Three replicas together admit no more than the limit plus one lease each:
// a client at 300/s spread over them gets the burst and the rate.
func TestLeasedLimiterAcrossReplicasRefusesExcess(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ls, _ := replicas(t, 3)
		n := 0
		for i := range 300 * 3 {
			if ok, _, _ := ls[i%3].Allow(context.Background(), "client", thirtyPerSecond); ok {
				n++
			}
			time.Sleep(time.Second / 300)
		}
		if n < 30+90-3 || n > 30+90+3*3 {
			t.Fatalf("three seconds at 300/s over three replicas: admitted %d; want the burst plus three seconds of rate (120), at most a lease (3) per replica more", n)
		}
	})
}

// Concurrent callers on one replica share one fetch at a time and never
// admit more than the cache charged: 64 callers racing for a burst of 1,000
// get at most 1,000 and at least 1,000 less what the replica still holds.
func TestLeasedLimiterConcurrentCallers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ls, cc := replicas(t, 1)
		limit := storage.Limit{Rate: 1000, Period: time.Hour, Burst: 1000}
		var admitted atomic.Int64
		var wg sync.WaitGroup
		for range 64 {
			wg.Go(func() {
				for range 50 {
					if ok, _, _ := ls[0].Allow(context.Background(), "client", limit); ok {
						admitted.Add(1)
					}
				}
			})
		}
		wg.Wait()
		if n := admitted.Load(); n > 1000 || n < 1000-64 {
			t.Fatalf("64 callers × 50 against a burst of 1,000: admitted %d; want 936..1,000", n)
		}
		if n := cc.allows.Load(); n > 3200/2 {
			t.Fatalf("%d cache calls for 3,200 attempts; want concurrent callers to share fetches", n)
		}
	})
}
