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
	if m.delay > 0 {
		time.Sleep(m.delay)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return nil, m.err
	}
	return m.sites[host], nil
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

func TestResolverRefreshesAfterTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, l := newTestResolver()
		ctx := context.Background()
		if _, err := r.Resolve(ctx, "a.test"); err != nil {
			t.Fatal(err)
		}
		l.set("a.test", &Site{ID: 1, Slug: "a-renamed"})
		time.Sleep(4 * time.Second)
		if s, _ := r.Resolve(ctx, "a.test"); s.Slug != "a" {
			t.Fatalf("before TTL: slug %q; want the cached a", s.Slug)
		}
		time.Sleep(2 * time.Second)
		if s, _ := r.Resolve(ctx, "a.test"); s.Slug != "a-renamed" {
			t.Fatalf("after TTL: slug %q; want a-renamed", s.Slug)
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
		l.err = errors.New("database down")
		time.Sleep(time.Minute)
		if s, err := r.Resolve(ctx, "a.test"); err != nil || s.Slug != "a" {
			t.Fatalf("known site during outage: %v, %v; want the stale answer", s, err)
		}
		if _, err := r.Resolve(ctx, "other.test"); err == nil || errors.Is(err, ErrUnknownHost) {
			t.Fatalf("unknown site during outage: %v; want the storage error, not 'unknown'", err)
		}
		l.err = nil
		if _, err := r.Resolve(ctx, "other.test"); !errors.Is(err, ErrUnknownHost) {
			t.Fatalf("after recovery: %v; want ErrUnknownHost (the failure was not remembered)", err)
		}
	})
}

func TestResolverCoalescesConcurrentLookups(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, l := newTestResolver()
		l.delay = 20 * time.Millisecond
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
