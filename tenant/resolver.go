package tenant

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// Lookup finds the site that serves a canonical host (see CanonicalHost).
// Storage implements it; the Resolver keeps its answers in memory.
type Lookup interface {
	// LookupHost returns the site serving host, or nil and no error when no
	// site does.
	LookupHost(ctx context.Context, host string) (*Site, error)
}

// ErrUnknownHost is returned by Resolve when no site serves the host.
var ErrUnknownHost = errors.New("tenant: no site is served at this host")

// Defaults of ResolverOptions.
const (
	DefaultResolverTTL      = time.Minute
	DefaultResolverMaxStale = time.Hour
	DefaultResolverEntries  = 100_000
	DefaultResolverUnknown  = 10_000
)

// revalidateTimeout bounds a background revalidation, which runs detached
// from the request that started it.
const revalidateTimeout = 10 * time.Second

// ResolverOptions tunes a Resolver. A nil *ResolverOptions means defaults.
type ResolverOptions struct {
	// TTL is how long an answer is served as fresh. After it, the answer is
	// still served (stale-while-revalidate) while one background lookup
	// refreshes it, so a site's requests never wait on storage once it is
	// cached. It bounds staleness when an invalidation broadcast is missed
	// (TTL plus one request). Default 1m.
	TTL time.Duration
	// MaxStale is how long past TTL an answer may still be served while it
	// is revalidated; an answer older than TTL+MaxStale is looked up before
	// the request goes on (a site nobody asked for in an hour). Default 1h.
	MaxStale time.Duration
	// MaxEntries bounds the cached hosts; beyond it the least recently used
	// (approximately: the oldest of a small sample) is dropped. Default
	// 100,000.
	MaxEntries int
	// MaxUnknown bounds how many unknown hosts are remembered, so junk Host
	// headers cannot grow memory without bound. Default 10000.
	MaxUnknown int
}

// Resolver maps hosts to sites through an in-process cache in front of a
// Lookup. Answers are fresh for TTL, then served while one background
// lookup revalidates them, and dropped at once by Invalidate (wired to the
// cache's invalidation broadcast, so every replica sees a site change within
// the broadcast latency). Resolution is a map read: its cost does not grow
// with the number of sites, and memory is bounded by MaxEntries.
type Resolver struct {
	lookup     Lookup
	ttl        time.Duration
	maxStale   time.Duration
	maxEntries int
	maxUnknown int

	mu       sync.RWMutex
	known    map[string]*entry // host → site
	unknown  map[string]time.Time
	inflight map[string]*call
	gen      uint64 // bumped by every invalidation; stale fills are discarded

	hits, stale, misses, evictions atomic.Uint64
}

type entry struct {
	site  *Site
	fresh time.Time // served without revalidation until then
	// used is the UnixNano of the last Resolve that returned it, for
	// eviction.
	used atomic.Int64
}

type call struct {
	done chan struct{}
	gen  uint64 // r.gen when the lookup started
	site *Site
	err  error
}

// ResolverStats counts what Resolve did, for the cache's hit-rate metrics.
type ResolverStats struct {
	// Hits were answered from a fresh entry (or a remembered unknown host),
	// Stale from an entry being revalidated in the background, Misses by a
	// lookup the request waited for.
	Hits, Stale, Misses uint64
	// Evictions are entries dropped to stay within MaxEntries.
	Evictions uint64
	// Entries are the hosts cached now.
	Entries int
}

// NewResolver returns a Resolver over lookup.
func NewResolver(lookup Lookup, opts *ResolverOptions) *Resolver {
	r := &Resolver{
		lookup:     lookup,
		ttl:        DefaultResolverTTL,
		maxStale:   DefaultResolverMaxStale,
		maxEntries: DefaultResolverEntries,
		maxUnknown: DefaultResolverUnknown,
		known:      map[string]*entry{},
		unknown:    map[string]time.Time{},
		inflight:   map[string]*call{},
	}
	if opts != nil {
		if opts.TTL > 0 {
			r.ttl = opts.TTL
		}
		if opts.MaxStale > 0 {
			r.maxStale = opts.MaxStale
		}
		if opts.MaxEntries > 0 {
			r.maxEntries = opts.MaxEntries
		}
		if opts.MaxUnknown > 0 {
			r.maxUnknown = opts.MaxUnknown
		}
	}
	return r
}

// Resolve returns the site serving host, a canonical host[:port]. It returns
// ErrUnknownHost when no site does, and the lookup's error when storage
// fails and no earlier answer is at hand (a stale answer is preferred to an
// outage: sites change rarely).
func (r *Resolver) Resolve(ctx context.Context, host string) (*Site, error) {
	now := time.Now()
	r.mu.RLock()
	e := r.known[host]
	neg, isNeg := r.unknown[host]
	r.mu.RUnlock()
	if e != nil {
		e.used.Store(now.UnixNano())
		switch {
		case now.Before(e.fresh):
			r.hits.Add(1)
			return e.site, nil
		case now.Before(e.fresh.Add(r.maxStale)):
			r.stale.Add(1)
			r.revalidate(ctx, host)
			return e.site, nil
		}
	} else if isNeg && now.Before(neg) {
		r.hits.Add(1)
		return nil, ErrUnknownHost
	}
	r.misses.Add(1)
	c, _ := r.start(ctx, host)
	select {
	case <-c.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if c.err != nil {
		if e != nil && !errors.Is(c.err, ErrUnknownHost) {
			return e.site, nil
		}
		return nil, c.err
	}
	return c.site, nil
}

// revalidate refreshes host in the background unless a lookup of it is
// under way already.
func (r *Resolver) revalidate(ctx context.Context, host string) {
	_, _ = r.start(context.WithoutCancel(ctx), host)
}

// start returns the lookup of host in flight, starting one (in its own
// goroutine, detached from ctx's cancellation, bounded by
// revalidateTimeout) when there is none. started reports which. A lookup
// that began before the last invalidation is not joined: it may have read
// the site as it was before the change the invalidation announced, and a
// request after the broadcast must see the change.
func (r *Resolver) start(ctx context.Context, host string) (c *call, started bool) {
	r.mu.Lock()
	if c, ok := r.inflight[host]; ok && c.gen == r.gen {
		r.mu.Unlock()
		return c, false
	}
	c = &call{done: make(chan struct{}), gen: r.gen}
	r.inflight[host] = c
	r.mu.Unlock()
	go r.fill(context.WithoutCancel(ctx), host, c, c.gen)
	return c, true
}

// fill looks host up once for every request waiting on c.
func (r *Resolver) fill(ctx context.Context, host string, c *call, gen uint64) {
	ctx, cancel := context.WithTimeout(ctx, revalidateTimeout)
	defer cancel()
	site, err := r.lookup.LookupHost(ctx, host)
	if err == nil && site == nil {
		err = ErrUnknownHost
	}
	c.site, c.err = site, err

	now := time.Now()
	r.mu.Lock()
	if r.inflight[host] == c { // not replaced by a lookup after an invalidation
		delete(r.inflight, host)
	}
	if gen == r.gen { // an invalidation during the lookup makes the answer suspect
		switch {
		case err == nil:
			e := &entry{site: site, fresh: now.Add(r.ttl)}
			e.used.Store(now.UnixNano())
			if _, ok := r.known[host]; !ok {
				r.evictLocked()
			}
			r.known[host] = e
			delete(r.unknown, host)
		case errors.Is(err, ErrUnknownHost):
			delete(r.known, host)
			if len(r.unknown) >= r.maxUnknown {
				clear(r.unknown)
			}
			r.unknown[host] = now.Add(r.ttl)
		}
	}
	r.mu.Unlock()
	close(c.done)
}

// evictSample is how many entries an eviction compares: Redis's
// approximate LRU, which needs no list to maintain on every hit (hits only
// store a timestamp, under the read lock).
const evictSample = 8

// evictLocked makes room for one entry. Map iteration starts at a random
// place, so the first entries are a random sample.
func (r *Resolver) evictLocked() {
	for len(r.known) >= r.maxEntries {
		var (
			victim string
			oldest int64
			n      int
		)
		for h, e := range r.known {
			if u := e.used.Load(); victim == "" || u < oldest {
				victim, oldest = h, u
			}
			if n++; n == evictSample {
				break
			}
		}
		delete(r.known, victim)
		r.evictions.Add(1)
	}
}

// Invalidate drops every cached answer that names site id, and every
// remembered unknown host (a changed site may have gained an alias).
func (r *Resolver) Invalidate(id ID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.gen++
	for h, e := range r.known {
		if e.site.ID == id {
			delete(r.known, h)
		}
	}
	clear(r.unknown)
}

// InvalidateAll drops every cached answer.
func (r *Resolver) InvalidateAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.gen++
	clear(r.known)
	clear(r.unknown)
}

// Stats returns the counters since the Resolver was made.
func (r *Resolver) Stats() ResolverStats {
	r.mu.RLock()
	n := len(r.known)
	r.mu.RUnlock()
	return ResolverStats{Hits: r.hits.Load(), Stale: r.stale.Load(), Misses: r.misses.Load(),
		Evictions: r.evictions.Load(), Entries: n}
}
