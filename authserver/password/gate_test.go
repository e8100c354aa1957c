package password

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
)

// holder takes the gate for key with weight and keeps it until release is
// closed, recording the order in which holders were admitted.
type holder struct {
	g     *Gate
	mu    *sync.Mutex
	order *[]string
}

func (h holder) hold(ctx context.Context, name, key string, weight int, release <-chan struct{}) error {
	if err := h.g.acquire(ctx, key, weight); err != nil {
		return err
	}
	h.mu.Lock()
	*h.order = append(*h.order, name)
	h.mu.Unlock()
	<-release
	h.g.release(weight)
	return nil
}

// A flood of checks at one site must not queue ahead of another site's:
// the quiet site's check runs as soon as the running one ends.
func TestGateServesQuietSiteFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := NewGate(GateOptions{Capacity: 1, QueuePerKey: 8})
		var mu sync.Mutex
		var order []string
		h := holder{g, &mu, &order}
		release := map[string]chan struct{}{}
		for _, n := range []string{"a1", "a2", "a3", "a4", "b1", "a5"} {
			release[n] = make(chan struct{})
		}
		ctx := context.Background()
		start := func(name, key string) {
			go func() { _ = h.hold(ctx, name, key, 1, release[name]) }()
			synctest.Wait()
		}
		start("a1", "A")
		start("a2", "A")
		start("a3", "A")
		start("a4", "A")
		start("b1", "B")
		start("a5", "A")
		for _, n := range []string{"a1", "b1", "a2", "a3", "a4", "a5"} {
			close(release[n])
			synctest.Wait()
		}
		want := []string{"a1", "b1", "a2", "a3", "a4", "a5"}
		if len(order) != len(want) {
			t.Fatalf("admitted %v, want %v", order, want)
		}
		for i := range want {
			if order[i] != want[i] {
				t.Fatalf("admitted in order %v, want %v: site B waited behind site A's queue", order, want)
			}
		}
	})
}

// Two sites that both flood take turns.
func TestGateAlternatesBusySites(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := NewGate(GateOptions{Capacity: 1, QueuePerKey: 8})
		var mu sync.Mutex
		var order []string
		h := holder{g, &mu, &order}
		names := []string{"a0", "a1", "a2", "a3", "b1", "b2", "b3"}
		release := map[string]chan struct{}{}
		for _, n := range names {
			release[n] = make(chan struct{})
			go func() { _ = h.hold(context.Background(), n, n[:1], 1, release[n]) }()
			synctest.Wait()
		}
		for range names {
			mu.Lock()
			last := order[len(order)-1]
			mu.Unlock()
			close(release[last])
			synctest.Wait()
		}
		// a0 ran first; b1 joined an empty ring slot and is served next;
		// from then on the two sites alternate.
		want := []string{"a0", "b1", "a1", "b2", "a2", "b3", "a3"}
		for i := range want {
			if order[i] != want[i] {
				t.Fatalf("admitted in order %v, want %v", order, want)
			}
		}
	})
}

func TestGateRefusesBeyondItsQueues(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := NewGate(GateOptions{Capacity: 2, QueuePerKey: 2, Queue: 3})
		ctx := context.Background()
		if err := g.acquire(ctx, "A", 2); err != nil {
			t.Fatal(err)
		}
		errs := make(chan error, 8)
		for range 2 {
			go func() { errs <- g.acquire(ctx, "A", 1) }()
		}
		synctest.Wait()
		if err := g.acquire(ctx, "A", 1); !errors.Is(err, ErrBusy) {
			t.Fatalf("third waiter of one site: %v, want ErrBusy", err)
		}
		go func() { errs <- g.acquire(ctx, "B", 1) }()
		synctest.Wait()
		if err := g.acquire(ctx, "C", 1); !errors.Is(err, ErrBusy) {
			t.Fatalf("a waiter beyond the gate's queue: %v, want ErrBusy", err)
		}
		g.release(2) // admits B and the first A waiter
		synctest.Wait()
		for range 2 {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		if g.used != 2 || g.waiting != 1 {
			t.Fatalf("after one release: used %d waiting %d, want 2 and 1", g.used, g.waiting)
		}
		g.release(1)
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	})
}

// A waiter that gives up leaves no trace: no capacity is lost and those
// behind it still run.
func TestGateWaiterCancels(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := NewGate(GateOptions{Capacity: 1})
		bg := context.Background()
		if err := g.acquire(bg, "A", 1); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(bg)
		gaveUp := make(chan error, 1)
		go func() { gaveUp <- g.acquire(ctx, "B", 1) }()
		synctest.Wait()
		admitted := make(chan error, 1)
		go func() { admitted <- g.acquire(bg, "C", 1) }()
		synctest.Wait()
		cancel()
		if err := <-gaveUp; !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled waiter: %v", err)
		}
		g.release(1)
		if err := <-admitted; err != nil {
			t.Fatal(err)
		}
		g.release(1)
		if g.used != 0 || g.waiting != 0 || len(g.ring) != 0 || len(g.queues) != 0 {
			t.Fatalf("gate not empty: used %d waiting %d ring %v", g.used, g.waiting, g.ring)
		}
	})
}

func TestGateVerify(t *testing.T) {
	g := NewGate(GateOptions{Capacity: 2})
	h, err := Hash("right", fast)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Verify(context.Background(), "A", "right", h); err != nil {
		t.Fatalf("right password: %v", err)
	}
	if err := g.Verify(context.Background(), "A", "wrong", h); !errors.Is(err, ErrMismatch) {
		t.Fatalf("wrong password: %v", err)
	}
	if threadsOf(h) != 1 || threadsOf("$argon2id$v=19$m=65536,t=3,p=2$x$y") != 2 || threadsOf("junk") != 1 {
		t.Fatal("threadsOf misreads the parallelism")
	}
	if g.used != 0 {
		t.Fatalf("capacity leaked: used %d", g.used)
	}
}
