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
}

const maxLeases = 100000

func newLeasedLimiter(c storage.Cache, n int, now func() time.Time) *leasedLimiter {
	return &leasedLimiter{cache: c, n: max(1, n), now: now, leases: map[string]*lease{}}
}

// Allow reports whether one more event under key is within limit.
func (l *leasedLimiter) Allow(ctx context.Context, key string, limit storage.Limit) (bool, time.Duration, error) {
	n := max(1, min(l.n, limit.Rate, limit.Burst))
	now := l.now()
	l.mu.Lock()
	if le := l.leases[key]; le != nil && le.left > 0 && now.Before(le.expires) {
		le.left--
		l.mu.Unlock()
		return true, 0, nil
	}
	l.mu.Unlock()
	scaled := storage.Limit{Rate: limit.Rate / n, Period: limit.Period, Burst: limit.Burst / n}
	ok, retry, err := l.cache.Allow(ctx, key, scaled)
	if err != nil || !ok {
		return ok, retry, err
	}
	l.mu.Lock()
	if len(l.leases) >= maxLeases {
		clear(l.leases)
	}
	l.leases[key] = &lease{left: n - 1, expires: now.Add(time.Duration(n) * limit.Period / time.Duration(limit.Rate))}
	l.mu.Unlock()
	return true, 0, nil
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
