package server

import (
	"context"
	"crypto/rand"
	"errors"
	"sync"
	"time"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/storage/cache"
	"github.com/lectern/lectern/storage/sqlstore"
)

// readyTTL is how long one readiness answer is reused: probes from several
// load balancers cost one check a second.
const readyTTL = time.Second

// readyBudget bounds one readiness check.
const readyBudget = 2 * time.Second

// Readiness is the /readyz document.
type Readiness struct {
	// Status is "ok", "unavailable" (a dependency fails) or "draining"
	// (shutting down).
	Status string `json:"status"`
	// Checks holds "ok" or "unavailable" per dependency.
	Checks map[string]string `json:"checks"`
	// Reasons says why a dependency is unavailable, in a few words.
	Reasons map[string]string `json:"reasons,omitempty"`
	// Cache describes the cache: its kind and, for Redis, its topology,
	// maxmemory-policy and circuit breaker.
	Cache map[string]string `json:"cache"`
}

// readiness caches the last check.
type readiness struct {
	replica string // this process' probe key in the cache

	mu   sync.Mutex
	last Readiness
	at   time.Time
}

func newReadiness() *readiness {
	return &readiness{replica: rand.Text()}
}

// check answers from the last check when it is recent, else checks again.
// Draining answers at once, whatever the dependencies say.
func (r *readiness) check(ctx context.Context, s *Server) Readiness {
	if s.draining.Load() {
		res := r.run(ctx, s, true)
		res.Status = "draining"
		return res
	}
	return r.run(ctx, s, false)
}

func (r *readiness) run(ctx context.Context, s *Server, cachedOnly bool) Readiness {
	r.mu.Lock()
	defer r.mu.Unlock()
	if (cachedOnly && !r.at.IsZero()) || time.Since(r.at) < readyTTL {
		return r.last
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), readyBudget)
	defer cancel()
	a := s.app
	res := Readiness{Status: "ok", Checks: map[string]string{}, Reasons: map[string]string{}, Cache: cacheInfo(a)}
	fail := func(name, reason string, err error) {
		res.Status = "unavailable"
		res.Checks[name] = "unavailable"
		res.Reasons[name] = reason
		a.Logger.WarnContext(ctx, "not ready", "dependency", name, "reason", reason, "err", err)
	}
	// A sign-in writes to the database (the grant at the code exchange)
	// and to the cache (session, pending request, code).
	if err := a.Store.Writable(ctx); err != nil {
		reason := "unreachable"
		if errors.Is(err, sqlstore.ErrReadOnly) {
			reason = "read-only"
		}
		fail("database", reason, err)
	} else {
		res.Checks["database"] = "ok"
	}
	err := a.Cache.Ping(ctx)
	if err == nil {
		// A write, not only a PING: a Redis at maxmemory with noeviction
		// answers PING and refuses every write. On a Cluster, a write on
		// every master: each fills up on its own.
		if rc, ok := redisOf(a.Cache); ok {
			err = rc.ProbeWrite(ctx, r.replica, 10*time.Second)
		} else {
			err = a.Cache.Set(ctx, storage.PlatformKey("ready", r.replica), []byte("1"), 10*time.Second)
		}
	}
	if err != nil {
		fail("cache", cache.Describe(err), err)
	} else {
		res.Checks["cache"] = "ok"
	}
	if len(res.Reasons) == 0 {
		res.Reasons = nil
	}
	r.last, r.at = res, time.Now()
	return res
}

// cacheInfo describes the cache for /readyz.
func cacheInfo(a *App) map[string]string {
	rc, ok := redisOf(a.Cache)
	if !ok {
		return map[string]string{"kind": "memory"}
	}
	breaker := "closed"
	if rc.Breaker().Open {
		breaker = "open"
	}
	return map[string]string{
		"kind":             "redis",
		"topology":         string(rc.Topology()),
		"maxmemory_policy": rc.MaxmemoryPolicy(),
		"breaker":          breaker,
	}
}

// redisOf finds the Redis cache under wrappers that offer Unwrap (tests
// and instrumentation wrap the cache).
func redisOf(c storage.Cache) (*cache.Redis, bool) {
	for {
		if rc, ok := c.(*cache.Redis); ok {
			return rc, true
		}
		u, ok := c.(interface{ Unwrap() storage.Cache })
		if !ok {
			return nil, false
		}
		c = u.Unwrap()
	}
}
