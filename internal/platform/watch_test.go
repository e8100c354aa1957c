package platform_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/lectern/lectern/authserver/keys"
	"github.com/lectern/lectern/internal/platform"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/storage/sqlstore/sqltest"
	"github.com/lectern/lectern/tenant"
)

// watchedResolver is the real site resolver, reporting each invalidation
// on events so that a test knows when a broadcast has been applied.
type watchedResolver struct {
	*tenant.Resolver
	events chan string
}

func (w watchedResolver) Invalidate(id tenant.ID) {
	w.Resolver.Invalidate(id)
	w.events <- fmt.Sprintf("site %d", id)
}

func (w watchedResolver) InvalidateAll() {
	w.Resolver.InvalidateAll()
	w.events <- "all sites"
}

// clientEvents records client invalidations (the authorization server's
// client cache in production).
type clientEvents chan string

func (c clientEvents) InvalidateClient(site tenant.ID, clientID string) {
	c <- fmt.Sprintf("client %d %s", site, clientID)
}

func (c clientEvents) InvalidateAllClients() {
	c <- "all clients"
}

func wantEvent(t *testing.T, events <-chan string, want string) {
	t.Helper()
	select {
	case got := <-events:
		if got != want {
			t.Fatalf("event %q, want %q", got, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("no %q within 5 s", want)
	}
}

// replica is a second process over the same database and cache: its own
// key manager (the same key-encryption key), resolver and Watch.
type replica struct {
	p        *platform.Platform
	resolver watchedResolver
	clients  clientEvents
}

func startReplica(t *testing.T, e *env) *replica {
	t.Helper()
	return startReplicaOn(t, e, e.cache)
}

// startReplicaOn starts a replica whose cache is c (e's, or a wrapper of
// it that the test can cut).
func startReplicaOn(t *testing.T, e *env, c storage.Cache) *replica {
	t.Helper()
	km, err := keys.NewManager(e.store, e.kek, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := &replica{
		p: &platform.Platform{Store: e.store, Keys: km, Cache: c, Logger: e.p.Logger, PasswordParams: testParams},
		// An hour: anything the replica sees sooner came by broadcast.
		resolver: watchedResolver{tenant.NewResolver(e.store, &tenant.ResolverOptions{TTL: time.Hour}), make(chan string, 16)},
		clients:  make(clientEvents, 16),
	}
	select {
	case <-r.p.Watch(t.Context(), r.resolver, r.clients):
	case <-time.After(5 * time.Second):
		t.Fatal("Watch did not subscribe within 5 s")
	}
	wantEvent(t, r.resolver.events, "all sites") // what was cached before the subscription
	return r
}

// A change made on one replica reaches the other's in-process caches by
// broadcast, long before their TTLs would.
func TestWatchAppliesBroadcasts(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		b := startReplica(t, e)

		s := e.createSite(t, "watched")
		wantEvent(t, b.resolver.events, fmt.Sprintf("site %d", s.ID))
		host := s.Tenant().Host()
		before, err := b.resolver.Resolve(t.Context(), host)
		if err != nil || before.Name != s.Name {
			t.Fatalf("replica B resolves %s to %v, %v", host, before, err)
		}

		s.Name = "Renamed on A"
		if err := e.p.UpdateSite(t.Context(), s); err != nil {
			t.Fatal(err)
		}
		wantEvent(t, b.resolver.events, fmt.Sprintf("site %d", s.ID))
		if after, err := b.resolver.Resolve(t.Context(), host); err != nil || after.Name != "Renamed on A" {
			t.Errorf("after the broadcast replica B resolves %s to %v, %v; want the new name", host, after, err)
		}

		// Key rotation: B has the old signing key cached (for a minute);
		// the broadcast makes it sign with the new one.
		old, err := b.p.Keys.SigningKey(t.Context(), s.ID)
		if err != nil {
			t.Fatal(err)
		}
		k, err := e.p.RotateKey(t.Context(), s.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for {
			sk, err := b.p.Keys.SigningKey(t.Context(), s.ID)
			if err != nil {
				t.Fatal(err)
			}
			if sk.KID == k.KID {
				break
			}
			if sk.KID != old.KID || time.Now().After(deadline) {
				t.Fatalf("replica B signs with %s; want %s (rotated from %s) within 5 s", sk.KID, k.KID, old.KID)
			}
			time.Sleep(10 * time.Millisecond)
		}

		// Client changes (apps.go announces them) name the site and client;
		// malformed messages are ignored.
		for _, m := range []string{"not-a-site:x", "12", fmt.Sprintf("%d:demo-member-app", s.ID)} {
			if err := e.cache.Publish(t.Context(), platform.ClientsChannel, []byte(m)); err != nil {
				t.Fatal(err)
			}
		}
		wantEvent(t, b.clients, fmt.Sprintf("client %d demo-member-app", s.ID))
		if err := e.cache.Publish(t.Context(), platform.SitesChannel, []byte("not a number")); err != nil {
			t.Fatal(err)
		}
		marker := e.createSite(t, "marker")
		wantEvent(t, b.resolver.events, fmt.Sprintf("site %d", marker.ID))
	})
}

// cuttableCache is a real cache whose subscriptions the test can end, as a
// lost Redis connection ends them, whose Subscribe can be made to fail, as an
// unreachable Redis does, or to wait (hold), as a slow one does.
type cuttableCache struct {
	storage.Cache
	down atomic.Bool
	hold chan struct{} // when set, Subscribe waits until it is closed

	mu   sync.Mutex
	cuts []context.CancelFunc
}

func (c *cuttableCache) Subscribe(ctx context.Context, channel string) (<-chan []byte, error) {
	if c.down.Load() {
		return nil, fmt.Errorf("test cache is down: %w", storage.ErrUnavailable)
	}
	if c.hold != nil {
		select {
		case <-c.hold:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	c.mu.Lock()
	c.cuts = append(c.cuts, cancel)
	c.mu.Unlock()
	return c.Cache.Subscribe(ctx, channel)
}

// cut ends every subscription.
func (c *cuttableCache) cut() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cancel := range c.cuts {
		cancel()
	}
	c.cuts = nil
}

// After a gap in the subscription, messages may have been missed: Watch
// subscribes again with backoff and drops every cached site. The bubble's
// fake clock lets the backoff pass without waiting for it.
func TestWatchDropsSitesAfterAGap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &cuttableCache{Cache: newMemory(t)}
		e := newEnv(t, sqltest.SQLite(t), c)
		s := e.createSite(t, "gap")
		resolver := watchedResolver{tenant.NewResolver(e.store, &tenant.ResolverOptions{TTL: time.Hour}), make(chan string, 16)}
		<-e.p.Watch(t.Context(), resolver, nil)
		wantEvent(t, resolver.events, "all sites")
		if _, err := resolver.Resolve(t.Context(), s.Tenant().Host()); err != nil {
			t.Fatal(err)
		}

		c.down.Store(true)
		c.cut()
		synctest.Wait() // the subscriptions have ended and Watch backs off
		// Changed while the subscription is down: no broadcast reaches
		// the resolver.
		s.Name = "Changed during the gap"
		if err := e.p.UpdateSite(t.Context(), s); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		select {
		case ev := <-resolver.events:
			t.Fatalf("%q while the cache is down", ev)
		default:
		}
		if got, _ := resolver.Resolve(t.Context(), s.Tenant().Host()); got.Name == s.Name {
			t.Fatal("the resolver saw the change without a broadcast; the test proves nothing")
		}

		c.down.Store(false)
		// The backoff has grown to 30 s at most.
		time.Sleep(30 * time.Second)
		synctest.Wait()
		wantEvent(t, resolver.events, "all sites")
		if got, err := resolver.Resolve(t.Context(), s.Tenant().Host()); err != nil || got.Name != s.Name {
			t.Errorf("after resubscribing the resolver answers %v, %v; want the changed site", got, err)
		}
	})
}

// Start-up does not wait long for the first subscription, so a replica may
// cache a site before it is subscribed; a change announced then is missed.
// When the first subscription comes into place, Watch drops every cached
// site, so the change shows at once and not only after the site cache's TTL.
func TestWatchDropsSitesCachedBeforeTheFirstSubscription(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &cuttableCache{Cache: newMemory(t), hold: make(chan struct{})}
		e := newEnv(t, sqltest.SQLite(t), c)
		s := e.createSite(t, "early")
		resolver := watchedResolver{tenant.NewResolver(e.store, &tenant.ResolverOptions{TTL: time.Hour}), make(chan string, 16)}
		subscribed := e.p.Watch(t.Context(), resolver, nil)
		if _, err := resolver.Resolve(t.Context(), s.Tenant().Host()); err != nil {
			t.Fatal(err)
		}
		// Changed while the first subscription is still on its way: the
		// announcement goes out before the replica listens.
		s.Name = "Changed before the subscription"
		if err := e.p.UpdateSite(t.Context(), s); err != nil {
			t.Fatal(err)
		}
		if got, _ := resolver.Resolve(t.Context(), s.Tenant().Host()); got.Name == s.Name {
			t.Fatal("the resolver saw the change without a broadcast; the test proves nothing")
		}
		close(c.hold)
		<-subscribed
		wantEvent(t, resolver.events, "all sites")
		if got, err := resolver.Resolve(t.Context(), s.Tenant().Host()); err != nil || got.Name != s.Name {
			t.Errorf("after the first subscription the resolver answers %v, %v; want the changed site", got, err)
		}
	})
}

// Watch never blocks start-up: while the cache cannot subscribe, the
// returned channel stays open and Watch keeps trying.
func TestWatchWaitsForTheCache(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &cuttableCache{Cache: newMemory(t)}
		c.down.Store(true)
		e := newEnv(t, sqltest.SQLite(t), c)
		resolver := watchedResolver{tenant.NewResolver(e.store, nil), make(chan string, 16)}
		subscribed := e.p.Watch(t.Context(), resolver, nil)
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		select {
		case <-subscribed:
			t.Fatal("Watch reports a subscription while the cache is down")
		default:
		}
		c.down.Store(false)
		time.Sleep(30 * time.Second)
		synctest.Wait()
		select {
		case <-subscribed:
		default:
			t.Fatal("Watch did not subscribe within 30 s of the cache's return")
		}
		for len(resolver.events) > 0 {
			<-resolver.events // dropping sites that were never cached is harmless
		}
		s := e.createSite(t, "late")
		wantEvent(t, resolver.events, fmt.Sprintf("site %d", s.ID))
	})
}
