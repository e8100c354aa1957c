package bearer

import (
	"context"
	"errors"
	"maps"
	"sync"
	"time"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// While the cache cannot be read (Redis down, or its circuit breaker open),
// each replica decides revocation from copies in its own memory: a site's
// revocation set as the database had it, used while the site's known
// revocation version (versions.go, polled every second) has not passed it.
// A request then costs no database query, so the resource APIs keep their
// throughput through a Redis outage; a revocation anywhere raises the
// version and the set is read again within a poll.
//
// localMaxEntries bounds one site's set; a site with more live
// revocations is decided per request by two indexed queries instead.
// Sets of sites not served for activeWindow are dropped.
const localMaxEntries = 50_000

type localSets struct {
	mu    sync.Mutex
	sites map[tenant.ID]*localSet
}

type localSet struct {
	version int64
	set     *revocationSet // nil: too large, ask the database per request
	usedAt  time.Time
	// retryAt, when set, is when the cache should be tried again: the set
	// stands in for a hash the cache refused to store.
	retryAt time.Time
}

func newLocalSets() *localSets { return &localSets{sites: map[tenant.ID]*localSet{}} }

// get returns the site's set if it is at least at version known.
func (l *localSets) get(site tenant.ID, known int64) (*localSet, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.sites[site]
	if e == nil || e.version < known {
		return nil, false
	}
	e.usedAt = time.Now()
	return e, true
}

func (l *localSets) put(site tenant.ID, set *revocationSet, retryAt time.Time) *localSet {
	e := &localSet{version: set.version, set: set, usedAt: time.Now(), retryAt: retryAt}
	if set.size() > localMaxEntries {
		e.set = nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if old := l.sites[site]; old == nil || old.version <= e.version {
		l.sites[site] = e
	}
	return e
}

func (l *localSets) sweep(now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	maps.DeleteFunc(l.sites, func(_ tenant.ID, e *localSet) bool { return now.Sub(e.usedAt) > activeWindow })
}

// checkRevokedOffline decides without the cache.
func (v *Verifier) checkRevokedOffline(ctx context.Context, site tenant.ID, jti, grantID string) error {
	e, ok := (*localSet)(nil), false
	if known, vok := v.versions.current(ctx, site); vok {
		e, ok = v.local.get(site, known)
	}
	if !ok {
		set, err := v.refill(ctx, site, false)
		if err != nil {
			if ctx.Err() != nil {
				return TemporarilyUnavailable(err)
			}
			return v.unavailable(ctx, site, "revocation state unavailable (cache and database down)", err)
		}
		e = v.local.put(site, set, time.Time{})
	}
	if e.set == nil {
		return v.checkRevokedInStore(ctx, site, jti, grantID)
	}
	if e.set.revoked(jti, grantID) {
		return InvalidToken(descRevoked)
	}
	return nil
}

// checkRevokedInStore decides from the database alone.
func (v *Verifier) checkRevokedInStore(ctx context.Context, site tenant.ID, jti, grantID string) error {
	revoked, err := v.store.TokenRevoked(ctx, site, jti)
	if err != nil {
		return v.unavailable(ctx, site, "revocation state unavailable (cache and database down)", err)
	}
	if revoked {
		return InvalidToken(descRevoked)
	}
	g, err := v.store.GrantByID(ctx, site, grantID)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		// A grant that does not exist (any more) vouches for nothing.
		return InvalidToken(descRevoked)
	case err != nil:
		return v.unavailable(ctx, site, "revocation state unavailable (cache and database down)", err)
	case g.RevokedAt != nil:
		return InvalidToken(descRevoked)
	}
	return nil
}
