package authserver

import (
	"context"
	"sync"
	"time"

	"github.com/lectern/lectern/limits"
	"github.com/lectern/lectern/storage"
)

// leasedLimiter enforces a limit kept in the shared cache (so it holds
// across replicas) without a cache round trip per request when a key is
// busy: a replica takes a lease of k events from the cache's GCRA limiter in
// one call (AllowAtMost, charged at the real limit) and spends it locally.
//
// A lease does not expire: events charged to the cache are spent, however
// late, never thrown away. (A lease that expired unused would still have been
// charged, and replicas each paying whole leases would refuse a client far
// below its limit.) So a fleet admits at most what the cache charged plus
// what the replicas hold: at most one lease per replica beyond the limit.
//
// k adapts per key: it starts at 1 (a quiet key costs one cache call per
// event, exactly as without leases) and is sized from how long the last
// lease lasted so that a lease lasts about leaseEvery (at most doubling or
// halving each time), up to min(maxLease, Burst/leaseShare). Callers that
// find the lease empty while another fetches it wait for that fetch instead
// of each taking one, and after the cache refused, the replica refuses the
// key itself until the cache's retry-after has passed (no event is within
// the limit before that).
// The limit is given per call: sites override it (package limits).
type leasedLimiter struct {
	cache    storage.Cache
	maxLease int
	now      func() time.Time

	mu     sync.Mutex
	leases map[string]*lease
}

type lease struct {
	left    int           // charged to the cache, not yet spent here
	size    int           // events the next fetch asks for
	fetched time.Time     // when the last fetch was made
	busy    chan struct{} // non-nil while a fetch is under way
	refused time.Time     // the cache refused until then: refuse here too
}

const (
	maxLeases  = 100000
	leaseEvery = 100 * time.Millisecond
	leaseShare = 10
)

func newLeasedLimiter(c storage.Cache, maxLease int, now func() time.Time) *leasedLimiter {
	return &leasedLimiter{cache: c, maxLease: max(1, maxLease), now: now, leases: map[string]*lease{}}
}

// Allow reports whether one more event under key is within limit.
func (l *leasedLimiter) Allow(ctx context.Context, key string, limit storage.Limit) (bool, time.Duration, error) {
	for {
		l.mu.Lock()
		le := l.leases[key]
		if le == nil {
			if len(l.leases) >= maxLeases {
				clear(l.leases)
			}
			le = &lease{size: 1}
			l.leases[key] = le
		}
		if le.left > 0 {
			le.left--
			l.mu.Unlock()
			return true, 0, nil
		}
		if wait := le.busy; wait != nil {
			l.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return false, 0, ctx.Err()
			}
		}
		now := l.now()
		if now.Before(le.refused) {
			l.mu.Unlock()
			return false, le.refused.Sub(now), nil
		}
		if !le.fetched.IsZero() {
			// The last lease of le.size lasted since: size the next one
			// to last about leaseEvery, moving at most by a factor of 2.
			since := max(now.Sub(le.fetched), time.Microsecond)
			fit := int(min(int64(le.size)*int64(leaseEvery)/int64(since), 1<<20))
			le.size = max(le.size/2, min(fit, le.size*2))
		}
		le.size = max(1, min(le.size, l.maxLease, limit.Burst/leaseShare))
		want, done := le.size, make(chan struct{})
		le.fetched, le.busy = now, done
		l.mu.Unlock()

		taken, retry, err := l.cache.AllowAtMost(ctx, key, limit, want)

		l.mu.Lock()
		le.busy = nil
		if err == nil && taken > 1 {
			le.left += taken - 1
		}
		if err == nil && taken < 1 {
			le.refused = now.Add(retry)
		}
		l.mu.Unlock()
		close(done)
		if err != nil || taken < 1 {
			return false, retry, err
		}
		return true, 0, nil
	}
}

// rateOf is the limit called name at the request's site as a GCRA rate
// whose burst is one period's worth.
func (s *Server) rateOf(ctx context.Context, name limits.Name) storage.Limit {
	n, per := s.limits.Rate(ctx, name)
	return storage.Limit{Rate: n, Period: per, Burst: n}
}
