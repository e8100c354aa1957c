package bearer

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/lectern/lectern/tenant"
)

// Known revocation versions (DESIGN §4, docs/decisions.md "Revocation state
// survives cache loss"). The database counts each site's revocations
// (storage.GrantStore.RevocationVersions); the cache's copy of a site's
// revocations says up to which version it is complete. A copy behind the
// version this replica knows may have lost revocations (a failover that
// dropped the old master's last writes) and is refilled before it is
// believed.
//
// What a replica knows comes from its own revocations (at once), refills,
// and a poll of the sites it served recently (Verifier.Run, every
// PollInterval, one query for all of them). A version is trusted for
// versionMaxAge after the database confirmed it; an older one is read again
// first, so a replica that does not poll (or a site it had not served)
// pays one small query per site every few seconds at most.
const (
	// DefaultPollInterval is how often Run reads the versions of the sites
	// served recently.
	DefaultPollInterval = time.Second
	// versionMaxAge is how long a version confirmed by the database is
	// taken as current: a revocation that reached the database but not the
	// cache is seen within this time (a few polls, so one slow or failed
	// poll does not force every request to read the database).
	versionMaxAge = 3 * time.Second
	// versionRetry is how long after a failed read of a site's version the
	// stale one is used without trying the database again (it is down, and
	// every request would wait for it).
	versionRetry = time.Second
	// activeWindow is how long a site stays in the poll (and its offline
	// copy in memory) after it was last served.
	activeWindow = 5 * time.Minute
)

// VersionStore reads revocation versions (storage.GrantStore).
type VersionStore interface {
	RevocationVersions(ctx context.Context, sites []tenant.ID) (map[tenant.ID]int64, error)
}

// versionBook holds the revocation version each site had when the database
// last told this replica.
type versionBook struct {
	store VersionStore

	mu    sync.Mutex
	sites map[tenant.ID]*siteVersion
	reads singleflight.Group
}

type siteVersion struct {
	v         int64
	checkedAt time.Time // revocations committed before this have versions <= v
	usedAt    time.Time
	failedAt  time.Time // the last failed read, if after checkedAt
}

func newVersionBook(store VersionStore) *versionBook {
	return &versionBook{store: store, sites: map[tenant.ID]*siteVersion{}}
}

// current returns the site's current revocation version as far as anyone
// can tell: the one the database confirmed within versionMaxAge, else a
// fresh read. When the database cannot be read it returns the last version
// it gave (nothing new can be revoked while it is down), and false when it
// never gave one.
func (b *versionBook) current(ctx context.Context, site tenant.ID) (int64, bool) {
	now := time.Now()
	b.mu.Lock()
	e := b.sites[site]
	if e != nil {
		e.usedAt = now
		if now.Sub(e.checkedAt) < versionMaxAge || now.Sub(e.failedAt) < versionRetry {
			v := e.v
			b.mu.Unlock()
			return v, true
		}
	}
	b.mu.Unlock()
	ch := b.reads.DoChan(flightKey(site), func() (any, error) {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), refillTimeout)
		defer cancel()
		start := time.Now()
		vs, err := b.store.RevocationVersions(rctx, []tenant.ID{site})
		if err != nil {
			b.failed(site, time.Now())
			return nil, err
		}
		b.observe(site, vs[site], start)
		return nil, nil
	})
	select {
	case <-ch:
	case <-ctx.Done():
		return 0, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if e := b.sites[site]; e != nil {
		return e.v, true
	}
	return 0, false
}

// observe records that the site's version was at least v for every
// revocation committed before at.
func (b *versionBook) observe(site tenant.ID, v int64, at time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.sites[site]
	if e == nil {
		e = &siteVersion{usedAt: at}
		b.sites[site] = e
	}
	e.v = max(e.v, v)
	if at.After(e.checkedAt) {
		e.checkedAt = at
	}
}

func (b *versionBook) failed(site tenant.ID, at time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if e := b.sites[site]; e != nil {
		e.failedAt = at
	}
}

// active returns the sites served within activeWindow and forgets the
// others.
func (b *versionBook) active(now time.Time) []tenant.ID {
	b.mu.Lock()
	defer b.mu.Unlock()
	maps.DeleteFunc(b.sites, func(_ tenant.ID, e *siteVersion) bool { return now.Sub(e.usedAt) > activeWindow })
	return slices.Collect(maps.Keys(b.sites))
}

// poll reads the versions of every active site in one query (a thousand
// sites per statement).
func (b *versionBook) poll(ctx context.Context) error {
	start := time.Now()
	sites := b.active(start)
	if len(sites) == 0 {
		return nil
	}
	vs, err := b.store.RevocationVersions(ctx, sites)
	if err != nil {
		return err
	}
	for _, s := range sites {
		b.observe(s, vs[s], start)
	}
	return nil
}
