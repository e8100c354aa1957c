package authserver

import (
	"context"
	"net/netip"
	"sync"
	"time"

	"github.com/lectern/lectern/limits"
	"github.com/lectern/lectern/storage"
)

// leasedLimiter enforces a limit kept in the shared cache (so it holds
// across replicas) without a cache round trip per request: a replica takes
// a lease of n events from the cache's GCRA limiter at a time and spends it
// locally. A lease is one event under the limit scaled down by n, and lasts
// as long as n events take at the full rate, so any client at or below the
// limit is still admitted; a replica may admit at most one lease beyond it.
// The limit is given per call: sites override it (package limits).
//
// A lease is at least n events and at least 1/leaseSlices of the limit's
// period: with a high limit (a platform client, or a load test raising it)
// a fixed lease of 5 would last nanoseconds and every request would go to
// the cache. The excess a replica may admit stays one lease: at most
// 1/leaseSlices (2%) of a period's worth.
type leasedLimiter struct {
	cache storage.Cache
	n     int
	now   func() time.Time

	mu     sync.Mutex
	leases map[string]*lease
}

type lease struct {
	left    int
	expires time.Time
	// fetch is set while one caller takes the next lease from the cache;
	// the others wait for it instead of each taking a lease (concurrent
	// takes would exhaust the scaled burst and refuse callers within the
	// limit).
	fetch *leaseFetch
}

type leaseFetch struct {
	done  chan struct{}
	ok    bool
	retry time.Duration
	err   error
}

const maxLeases = 100000

// leaseSlices: a lease holds at most this fraction (1/leaseSlices) of a
// period's events, unless that is fewer than the minimum lease.
const leaseSlices = 50

func newLeasedLimiter(c storage.Cache, n int, now func() time.Time) *leasedLimiter {
	return &leasedLimiter{cache: c, n: max(1, n), now: now, leases: map[string]*lease{}}
}

// Allow reports whether one more event under key is within limit.
func (l *leasedLimiter) Allow(ctx context.Context, key string, limit storage.Limit) (bool, time.Duration, error) {
	n := max(1, min(max(l.n, limit.Rate/leaseSlices), limit.Rate, limit.Burst))
	for {
		now := l.now()
		l.mu.Lock()
		le := l.leases[key]
		if le != nil && le.left > 0 && now.Before(le.expires) {
			le.left--
			l.mu.Unlock()
			return true, 0, nil
		}
		if le != nil && le.fetch != nil {
			f := le.fetch
			l.mu.Unlock()
			select {
			case <-f.done:
			case <-ctx.Done():
				return false, 0, ctx.Err()
			}
			if f.err == nil && !f.ok {
				return false, f.retry, nil // refused: so is this call
			}
			// Take from the new lease, or fetch the next one (also when
			// the fetch failed: its caller's context may have ended).
			continue
		}
		if le == nil {
			if len(l.leases) >= maxLeases {
				clear(l.leases)
			}
			le = &lease{}
			l.leases[key] = le
		}
		f := &leaseFetch{done: make(chan struct{})}
		le.fetch = f
		l.mu.Unlock()

		scaled := storage.Limit{Rate: limit.Rate / n, Period: limit.Period, Burst: limit.Burst / n}
		f.ok, f.retry, f.err = l.cache.Allow(ctx, key, scaled)
		l.mu.Lock()
		le.fetch = nil
		if f.err == nil && f.ok {
			le.left, le.expires = n-1, now.Add(time.Duration(n)*limit.Period/time.Duration(limit.Rate))
		}
		l.mu.Unlock()
		close(f.done)
		return f.ok, f.retry, f.err
	}
}

// rateOf is the limit called name at the request's site as a GCRA rate
// whose burst is one period's worth.
func (s *Server) rateOf(ctx context.Context, name limits.Name) storage.Limit {
	n, per := s.limits.Rate(ctx, name)
	return storage.Limit{Rate: n, Period: per, Burst: n}
}

// addressOf is the client address per-IP limits count: an IPv4 address,
// or the /64 an IPv6 address belongs to (one subscriber gets a whole /64,
// so counting single IPv6 addresses would count nothing).
func addressOf(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return ip
	}
	a = a.Unmap()
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}
