package authserver

import (
	"context"
	"sync"
	"time"

	"github.com/lectern/lectern/storage"
)

// leasedLimiter enforces a limit kept in the shared cache (so it holds
// across replicas) without a cache round trip per request: a replica takes
// a lease of n events from the cache's GCRA limiter at a time and spends it
// locally. A lease is one event under the limit scaled down by n, and lasts
// as long as n events take at the full rate, so any client at or below the
// limit is still admitted; a replica may admit at most one lease beyond it.
type leasedLimiter struct {
	cache storage.Cache
	limit storage.Limit
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

func newLeasedLimiter(c storage.Cache, limit storage.Limit, n int, now func() time.Time) *leasedLimiter {
	n = max(1, min(n, limit.Rate, limit.Burst))
	return &leasedLimiter{cache: c, limit: limit, n: n, now: now, leases: map[string]*lease{}}
}

// Allow reports whether one more event under key is within the limit.
func (l *leasedLimiter) Allow(ctx context.Context, key string) (bool, time.Duration, error) {
	now := l.now()
	l.mu.Lock()
	if le := l.leases[key]; le != nil && le.left > 0 && now.Before(le.expires) {
		le.left--
		l.mu.Unlock()
		return true, 0, nil
	}
	l.mu.Unlock()
	scaled := storage.Limit{Rate: l.limit.Rate / l.n, Period: l.limit.Period, Burst: l.limit.Burst / l.n}
	ok, retry, err := l.cache.Allow(ctx, key, scaled)
	if err != nil || !ok {
		return ok, retry, err
	}
	l.mu.Lock()
	if len(l.leases) >= maxLeases {
		clear(l.leases)
	}
	l.leases[key] = &lease{left: l.n - 1, expires: now.Add(time.Duration(l.n) * l.limit.Period / time.Duration(l.limit.Rate))}
	l.mu.Unlock()
	return true, 0, nil
}
