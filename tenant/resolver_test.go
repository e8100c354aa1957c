package tenant

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// mapLookup is an in-memory Lookup that counts calls. The Resolver is a
// cache in front of storage; counting lookups is how a test sees caching.
type mapLookup struct {
	mu    sync.Mutex
	sites map[string]*Site
	err   error
	calls atomic.Int64
	delay time.Duration
}

func (m *mapLookup) LookupHost(ctx context.Context, host string) (*Site, error) {
	m.calls.Add(1)
	m.mu.Lock()
	delay := m.delay
	m.mu.Unlock()
	if delay > 0 {
		time.Sleep(delay)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return nil, m.err
	}
	return m.sites[host], nil
}

// setErr and setDelay change the lookup while background revalidations
// may be reading it.
func (m *mapLookup) setErr(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.err = err
}

func (m *mapLookup) setDelay(d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.delay = d
}

func (m *mapLookup) set(host string, s *Site) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s == nil {
		delete(m.sites, host)
		return
	}
	m.sites[host] = s
}

// newTestResolver is called inside a synctest bubble: the resolver reads
// the time package's clock, which the test moves with time.Sleep.
func newTestResolver() (*Resolver, *mapLookup) {
	l := &mapLookup{sites: map[string]*Site{
		"a.test": {ID: 1, Slug: "a", Origin: "https://a.test"},
	}}
	return NewResolver(l, &ResolverOptions{TTL: 5 * time.Second}), l
}

func TestResolverCachesAnswers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, l := newTestResolver()
		for i := 0; i < 100; i++ {
			s, err := r.Resolve(context.Background(), "a.test")
			if err != nil || s.Slug != "a" {
				t.Fatalf("Resolve = %v, %v", s, err)
			}
		}
		if n := l.calls.Load(); n != 1 {
			t.Fatalf("100 resolutions did %d lookups; want 1", n)
		}
	})
}

func TestResolverUnknownHost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, l := newTestResolver()
		for i := 0; i < 10; i++ {
			if _, err := r.Resolve(context.Background(), "nope.test"); !errors.Is(err, ErrUnknownHost) {
				t.Fatalf("err = %v; want ErrUnknownHost", err)
			}
		}
		if n := l.calls.Load(); n != 1 {
			t.Fatalf("unknown host looked up %d times; want 1 (remembered)", n)
		}
	})
}

func TestResolverRevalidatesAfterTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, l := newTestResolver()
		ctx := context.Background()
		if _, err := r.Resolve(ctx, "a.test"); err != nil {
			t.Fatal(err)
		}
		l.set("a.test", &Site{ID: 1, Slug: "a-renamed"})
		time.Sleep(4 * time.Second)
		if s, _ := r.Resolve(ctx, "a.test"); s.Slug != "a" || l.calls.Load() != 1 {
			t.Fatalf("before TTL: slug %q after %d lookups; want the cached a, 1 lookup", s.Slug, l.calls.Load())
		}
		// After TTL the request is answered at once with what is cached,
		// while one background lookup refreshes it.
		l.setDelay(time.Second)
		time.Sleep(2 * time.Second)
		for range 5 {
			if s, _ := r.Resolve(ctx, "a.test"); s.Slug != "a" {
				t.Fatalf("after TTL, while revalidating: slug %q; want the stale a at once", s.Slug)
			}
		}
		synctest.Wait() // the revalidation is asleep in its lookup
		time.Sleep(time.Second)
		synctest.Wait()
		if s, _ := r.Resolve(ctx, "a.test"); s.Slug != "a-renamed" {
			t.Fatalf("after the revalidation: slug %q; want a-renamed", s.Slug)
		}
		if n := l.calls.Load(); n != 2 {
			t.Fatalf("%d lookups; want 2 (one revalidation for six stale reads)", n)
		}
		st := r.Stats()
		if st.Stale != 5 || st.Misses != 1 || st.Hits != 2 {
			t.Errorf("stats %+v; want 2 hits, 5 stale, 1 miss", st)
		}
	})
}

func TestResolverLooksUpAfterMaxStale(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := &mapLookup{sites: map[string]*Site{"a.test": {ID: 1, Slug: "a"}}}
		r := NewResolver(l, &ResolverOptions{TTL: time.Second, MaxStale: time.Minute})
		ctx := context.Background()
		_, _ = r.Resolve(ctx, "a.test")
		l.set("a.test", &Site{ID: 1, Slug: "a-renamed"})
		time.Sleep(2 * time.Minute)
		// Too old to serve: the request waits for the lookup.
		if s, _ := r.Resolve(ctx, "a.test"); s.Slug != "a-renamed" {
			t.Fatalf("past MaxStale: slug %q; want a-renamed, looked up before answering", s.Slug)
		}
		// A removed host is forgotten by its revalidation.
		l.set("a.test", nil)
		time.Sleep(2 * time.Second)
		_, _ = r.Resolve(ctx, "a.test")
		synctest.Wait()
		if _, err := r.Resolve(ctx, "a.test"); !errors.Is(err, ErrUnknownHost) {
			t.Fatalf("after its removal was revalidated: err %v; want ErrUnknownHost", err)
		}
	})
}

func TestResolverBoundsEntries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := &mapLookup{sites: map[string]*Site{}}
		host := func(i int) string { return "s" + string(rune('a'+i/26)) + string(rune('a'+i%26)) + ".test" }
		for i := range 200 {
			l.sites[host(i)] = &Site{ID: ID(i + 1), Slug: host(i)}
		}
		r := NewResolver(l, &ResolverOptions{MaxEntries: 50})
		ctx := context.Background()
		// One host stays in use while 199 others pass through.
		for i := range 200 {
			if _, err := r.Resolve(ctx, host(i)); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Millisecond)
			_, _ = r.Resolve(ctx, host(0))
			time.Sleep(time.Millisecond)
		}
		st := r.Stats()
		if st.Entries > 50 || st.Evictions < 150 {
			t.Fatalf("stats %+v; want at most 50 entries and the rest evicted", st)
		}
		before := l.calls.Load()
		_, _ = r.Resolve(ctx, host(0))
		if l.calls.Load() != before {
			t.Errorf("the host in constant use was evicted")
		}
	})
}

func TestResolverInvalidate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, l := newTestResolver()
		ctx := context.Background()
		if _, err := r.Resolve(ctx, "a.test"); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Resolve(ctx, "new.test"); !errors.Is(err, ErrUnknownHost) {
			t.Fatal(err)
		}
		// A site changes and gains an alias; the broadcast invalidates.
		l.set("a.test", &Site{ID: 1, Slug: "a2"})
		l.set("new.test", &Site{ID: 1, Slug: "a2"})
		r.Invalidate(1)
		if s, _ := r.Resolve(ctx, "a.test"); s.Slug != "a2" {
			t.Fatalf("after Invalidate: %q; want a2", s.Slug)
		}
		if s, err := r.Resolve(ctx, "new.test"); err != nil || s.Slug != "a2" {
			t.Fatalf("new alias after Invalidate: %v, %v", s, err)
		}
		l.set("a.test", nil)
		r.InvalidateAll()
		if _, err := r.Resolve(ctx, "a.test"); !errors.Is(err, ErrUnknownHost) {
			t.Fatalf("deleted site after InvalidateAll: %v; want ErrUnknownHost", err)
		}
	})
}

func TestResolverServesStaleWhenStorageFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, l := newTestResolver()
		ctx := context.Background()
		if _, err := r.Resolve(ctx, "a.test"); err != nil {
			t.Fatal(err)
		}
		l.setErr(errors.New("database down"))
		time.Sleep(time.Minute)
		if s, err := r.Resolve(ctx, "a.test"); err != nil || s.Slug != "a" {
			t.Fatalf("known site during outage: %v, %v; want the stale answer", s, err)
		}
		if _, err := r.Resolve(ctx, "other.test"); err == nil || errors.Is(err, ErrUnknownHost) {
			t.Fatalf("unknown site during outage: %v; want the storage error, not 'unknown'", err)
		}
		l.setErr(nil)
		if _, err := r.Resolve(ctx, "other.test"); !errors.Is(err, ErrUnknownHost) {
			t.Fatalf("after recovery: %v; want ErrUnknownHost (the failure was not remembered)", err)
		}
	})
}

func TestResolverCoalescesConcurrentLookups(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, l := newTestResolver()
		l.setDelay(20 * time.Millisecond)
		var wg sync.WaitGroup
		for i := 0; i < 50; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := r.Resolve(context.Background(), "a.test"); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if n := l.calls.Load(); n != 1 {
			t.Fatalf("50 concurrent first resolutions did %d lookups; want 1", n)
		}
	})
}

func TestResolverBoundsUnknownHosts(t *testing.T) {
	l := &mapLookup{sites: map[string]*Site{}}
	r := NewResolver(l, &ResolverOptions{MaxUnknown: 10})
	for i := 0; i < 1000; i++ {
		_, _ = r.Resolve(context.Background(), "junk"+string(rune('a'+i%26))+".test"+string(rune('0'+i%10)))
	}
	r.mu.RLock()
	n := len(r.unknown)
	r.mu.RUnlock()
	if n > 10 {
		t.Fatalf("%d unknown hosts remembered; want at most 10", n)
	}
}

// snapshotLookup reads the site when the lookup starts and answers after
// delay, like a query whose row was read before a concurrent update
// committed.
type snapshotLookup struct {
	mu    sync.Mutex
	site  *Site
	delay time.Duration
}

func (l *snapshotLookup) LookupHost(ctx context.Context, host string) (*Site, error) {
	l.mu.Lock()
	s := l.site
	l.mu.Unlock()
	time.Sleep(l.delay)
	return s, nil
}

func (l *snapshotLookup) set(s *Site) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.site = s
}

// TestResolverInvalidateDoesNotJoinAnEarlierLookup: a request after the
// invalidation broadcast must not be answered by a lookup that began
// before it (a stale-while-revalidate refresh in flight read the site
// before the change).
func TestResolverInvalidateDoesNotJoinAnEarlierLookup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := &snapshotLookup{site: &Site{ID: 1, Slug: "old"}, delay: time.Second}
		r := NewResolver(l, &ResolverOptions{TTL: 5 * time.Second})
		ctx := context.Background()
		if s, err := r.Resolve(ctx, "a.test"); err != nil || s.Slug != "old" {
			t.Fatalf("first resolution: %v, %v", s, err)
		}
		time.Sleep(6 * time.Second)
		// Stale: answered at once, a refresh starts and reads "old".
		if s, _ := r.Resolve(ctx, "a.test"); s.Slug != "old" {
			t.Fatalf("stale answer: %q", s.Slug)
		}
		time.Sleep(10 * time.Millisecond)
		l.set(&Site{ID: 1, Slug: "new"}) // the change commits
		r.Invalidate(1)                  // and its broadcast arrives
		if s, err := r.Resolve(ctx, "a.test"); err != nil || s.Slug != "new" {
			t.Fatalf("after the broadcast: %v, %v; want the changed site, not the refresh begun before it", s, err)
		}
		time.Sleep(2 * time.Second) // the earlier refresh ends; it must not be cached
		if s, _ := r.Resolve(ctx, "a.test"); s.Slug != "new" {
			t.Fatalf("after the earlier refresh ended: %q; want new", s.Slug)
		}
		if s := r.Stats(); s.Entries != 1 {
			t.Fatalf("entries %d; want 1", s.Entries)
		}
	})
}
