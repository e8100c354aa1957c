package tenant

import (
	"context"
	"errors"
	"sync"
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

// ResolverOptions tunes a Resolver. A nil *ResolverOptions means defaults.
type ResolverOptions struct {
	// TTL is how long an answer is used before it is looked up again. It
	// bounds staleness when an invalidation broadcast is missed. Default 5s.
	TTL time.Duration
	// MaxUnknown bounds how many unknown hosts are remembered, so junk Host
	// headers cannot grow memory without bound. Default 10000.
	MaxUnknown int
}

// Resolver maps hosts to sites through an in-process cache in front of a
// Lookup. Answers are refreshed after TTL and dropped at once by Invalidate
// (wired to the cache's invalidation broadcast, so every replica sees a site
// change within the broadcast latency, and within TTL at worst). Resolution
// is a map read: its cost does not grow with the number of sites.
type Resolver struct {
	lookup     Lookup
	ttl        time.Duration
	maxUnknown int

	mu       sync.RWMutex
	known    map[string]entry // host → site
	unknown  map[string]time.Time
	inflight map[string]*call
	gen      uint64 // bumped by every invalidation; stale fills are discarded
}

type entry struct {
	site    *Site
	expires time.Time
}

type call struct {
	done chan struct{}
	site *Site
	err  error
}

// NewResolver returns a Resolver over lookup.
func NewResolver(lookup Lookup, opts *ResolverOptions) *Resolver {
	r := &Resolver{
		lookup:     lookup,
		ttl:        5 * time.Second,
		maxUnknown: 10000,
		known:      map[string]entry{},
		unknown:    map[string]time.Time{},
		inflight:   map[string]*call{},
	}
	if opts != nil {
		if opts.TTL > 0 {
			r.ttl = opts.TTL
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
	e, ok := r.known[host]
	neg, isNeg := r.unknown[host]
	r.mu.RUnlock()
	switch {
	case ok && now.Before(e.expires):
		return e.site, nil
	case isNeg && now.Before(neg):
		return nil, ErrUnknownHost
	}
	site, err := r.fill(ctx, host)
	if err != nil {
		if ok && !errors.Is(err, ErrUnknownHost) {
			return e.site, nil
		}
		return nil, err
	}
	return site, nil
}

// fill looks host up once however many requests wait for it.
func (r *Resolver) fill(ctx context.Context, host string) (*Site, error) {
	r.mu.Lock()
	if c, ok := r.inflight[host]; ok {
		r.mu.Unlock()
		select {
		case <-c.done:
			return c.site, c.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	c := &call{done: make(chan struct{})}
	r.inflight[host] = c
	gen := r.gen
	r.mu.Unlock()

	site, err := r.lookup.LookupHost(ctx, host)
	if err == nil && site == nil {
		err = ErrUnknownHost
	}
	c.site, c.err = site, err

	r.mu.Lock()
	delete(r.inflight, host)
	if gen == r.gen { // an invalidation during the lookup makes the answer suspect
		expires := time.Now().Add(r.ttl)
		switch {
		case err == nil:
			r.known[host] = entry{site: site, expires: expires}
			delete(r.unknown, host)
		case errors.Is(err, ErrUnknownHost):
			delete(r.known, host)
			if len(r.unknown) >= r.maxUnknown {
				clear(r.unknown)
			}
			r.unknown[host] = expires
		}
	}
	r.mu.Unlock()
	close(c.done)
	return site, err
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
