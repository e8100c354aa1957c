package password

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// ErrBusy: the gate's queue is full; the caller should answer "busy, try
// again shortly" without checking the password.
var ErrBusy = errors.New("password: too many password checks waiting")

// GateOptions configures NewGate. Zero values take the defaults.
type GateOptions struct {
	// Capacity is the argon2id threads that may run at once: a check
	// weighs its hash's parallelism (p). Default runtime.GOMAXPROCS(0),
	// about one hashing thread per core.
	Capacity int
	// QueuePerKey is how many checks of one key (a site) may wait.
	// Default 4.
	QueuePerKey int
	// Queue is how many checks may wait in all. Default 64.
	Queue int
}

// Gate bounds the argon2id work running at once and shares it fairly
// between keys (sites): a weighted semaphore whose waiters queue per key,
// served round-robin, so a sign-in flood at one site waits behind its own
// requests while another site's next check goes first. Each hash takes
// 64 MiB and a core for tens of milliseconds; unbounded, 40 sign-ins at
// one site stop every other site's requests for seconds. Beyond the short
// queues a check is refused (ErrBusy) rather than left to wait.
//
// golang.org/x/sync/semaphore is weighted but serves waiters in one FIFO:
// a flood at one site would still queue ahead of every other site.
type Gate struct {
	capacity, perKey, total int

	mu      sync.Mutex
	used    int
	waiting int
	queues  map[string][]*waiter
	ring    []string // keys with waiters, in round-robin order
	next    int      // index in ring of the key served next
}

type waiter struct {
	key    string
	weight int
	ready  chan struct{} // closed when granted
}

// NewGate returns a Gate.
func NewGate(o GateOptions) *Gate {
	g := &Gate{capacity: o.Capacity, perKey: o.QueuePerKey, total: o.Queue, queues: map[string][]*waiter{}}
	if g.capacity <= 0 {
		g.capacity = runtime.GOMAXPROCS(0)
	}
	if g.perKey <= 0 {
		g.perKey = 4
	}
	if g.total <= 0 {
		g.total = 64
	}
	return g
}

// Verify checks password against encoded (as the package's Verify) once
// the gate admits it, on behalf of key. It returns ErrBusy when key's
// queue or the gate's is full, and ctx's error if ctx ends while waiting.
func (g *Gate) Verify(ctx context.Context, key, password, encoded string) error {
	release, err := g.Acquire(ctx, key, encoded)
	if err != nil {
		return err
	}
	defer release()
	return Verify(password, encoded)
}

// Acquire waits until a check of encoded (weighed by its parallelism) may
// run for key, and returns the function that ends it. Errors as Verify's.
// It lets a caller do something between admission and the hash (the
// sign-in throttle reserves its slot there).
func (g *Gate) Acquire(ctx context.Context, key, encoded string) (release func(), err error) {
	return g.acquireThreads(ctx, key, threadsOf(encoded))
}

// AcquireHash is Acquire for hashing a new password under p (a sign-up,
// a reset): the same argon2id work as a check, so it waits in the same
// queues and weighs p's parallelism.
func (g *Gate) AcquireHash(ctx context.Context, key string, p Params) (release func(), err error) {
	return g.acquireThreads(ctx, key, int(p.Threads))
}

func (g *Gate) acquireThreads(ctx context.Context, key string, threads int) (release func(), err error) {
	w := min(max(1, threads), g.capacity)
	if err := g.acquire(ctx, key, w); err != nil {
		return nil, err
	}
	var once sync.Once
	return func() { once.Do(func() { g.release(w) }) }, nil
}

// Capacity is the weight that may run at once.
func (g *Gate) Capacity() int { return g.capacity }

func (g *Gate) acquire(ctx context.Context, key string, weight int) error {
	g.mu.Lock()
	if g.waiting == 0 && g.used+weight <= g.capacity {
		g.used += weight
		g.mu.Unlock()
		return nil
	}
	if g.waiting >= g.total || len(g.queues[key]) >= g.perKey {
		g.mu.Unlock()
		return ErrBusy
	}
	w := &waiter{key: key, weight: weight, ready: make(chan struct{})}
	if len(g.queues[key]) == 0 {
		// A key that had nobody waiting is served next: a quiet site's
		// sign-in waits for at most the checks already running, not for
		// a flooded site's queue.
		if g.next > len(g.ring) {
			g.next = 0
		}
		g.ring = slices.Insert(g.ring, g.next, key)
	}
	g.queues[key] = append(g.queues[key], w)
	g.waiting++
	g.mu.Unlock()

	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
		g.mu.Lock()
		if g.remove(w) {
			g.dispatch() // a heavier waiter behind this one may fit now
			g.mu.Unlock()
			return ctx.Err()
		}
		g.mu.Unlock()
		// Granted meanwhile: hand the slot back.
		g.release(weight)
		return ctx.Err()
	}
}

func (g *Gate) release(weight int) {
	g.mu.Lock()
	g.used -= weight
	g.dispatch()
	g.mu.Unlock()
}

// dispatch grants waiters, one key at a time in ring order, while the
// next one fits. A waiter that does not fit stops the round (no
// overtaking by lighter ones, which would starve it). g.mu must be held.
func (g *Gate) dispatch() {
	for len(g.ring) > 0 {
		if g.next >= len(g.ring) {
			g.next = 0
		}
		key := g.ring[g.next]
		q := g.queues[key]
		w := q[0]
		if g.used+w.weight > g.capacity {
			return
		}
		g.used += w.weight
		g.waiting--
		close(w.ready)
		if len(q) == 1 {
			delete(g.queues, key)
			g.ring = append(g.ring[:g.next], g.ring[g.next+1:]...)
			// g.next now points at the key after this one.
		} else {
			g.queues[key] = q[1:]
			g.next++
		}
	}
}

// remove takes w out of its queue if it is still waiting. g.mu must be
// held.
func (g *Gate) remove(w *waiter) bool {
	q := g.queues[w.key]
	for i, x := range q {
		if x != w {
			continue
		}
		g.waiting--
		if len(q) == 1 {
			delete(g.queues, w.key)
			for j, k := range g.ring {
				if k == w.key {
					g.ring = append(g.ring[:j], g.ring[j+1:]...)
					if j < g.next {
						g.next--
					}
					break
				}
			}
		} else {
			g.queues[w.key] = append(q[:i:i], q[i+1:]...)
		}
		return true
	}
	return false
}

// threadsOf reads the parallelism of a PHC string cheaply; 1 when it
// cannot (Verify then refuses the string anyway).
func threadsOf(encoded string) int {
	_, rest, ok := strings.Cut(encoded, ",p=")
	if !ok {
		return 1
	}
	n := 0
	for i := 0; i < len(rest) && i < 3 && rest[i] >= '0' && rest[i] <= '9'; i++ {
		n = n*10 + int(rest[i]-'0')
	}
	return max(n, 1)
}
