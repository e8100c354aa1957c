package cache

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lectern/lectern/storage"
)

// errCircuitOpen answers every call while the breaker is open: Redis failed
// several times in a row and has not answered a probe since.
var errCircuitOpen = fmt.Errorf("cache: redis circuit open (Redis failed repeatedly; probing it in the background): %w", storage.ErrUnavailable)

// Breaker defaults (RedisOptions).
const (
	DefaultBreakerThreshold = 3
	DefaultBreakerMinOpen   = 250 * time.Millisecond
	DefaultBreakerMaxOpen   = 2 * time.Second
	breakerProbeTimeout     = time.Second
)

// breaker detects a Redis outage once instead of on every request. After
// threshold consecutive failures (Redis unreachable, stalled or not serving)
// it opens: every call fails at once with errCircuitOpen, so callers go
// straight to the database instead of each waiting for a dial or a timeout.
// While open, a background probe (PING) tries Redis after minOpen, then after
// twice as long each time it fails, up to maxOpen; the first probe that
// succeeds closes the breaker (half-open: the probe is the one call let
// through). A success resets the count, so scattered errors under load do
// not open it.
type breaker struct {
	threshold        int
	minOpen, maxOpen time.Duration
	probe            func(ctx context.Context) error
	stop             <-chan struct{}

	open     atomic.Bool
	failures atomic.Int64
	opens    atomic.Uint64

	mu      sync.Mutex
	probing bool
}

func newBreaker(threshold int, minOpen, maxOpen time.Duration, probe func(context.Context) error, stop <-chan struct{}) *breaker {
	if minOpen <= 0 {
		minOpen = DefaultBreakerMinOpen
	}
	if maxOpen < minOpen {
		maxOpen = max(DefaultBreakerMaxOpen, minOpen)
	}
	return &breaker{threshold: threshold, minOpen: minOpen, maxOpen: maxOpen, probe: probe, stop: stop}
}

// allow reports errCircuitOpen while the breaker is open. A nil breaker
// (disabled) allows everything.
func (b *breaker) allow() error {
	if b != nil && b.open.Load() {
		return errCircuitOpen
	}
	return nil
}

// record counts the outcome of a call that was allowed: failed says whether
// it failed because Redis could not serve it.
func (b *breaker) record(failed bool) {
	if b == nil {
		return
	}
	if !failed {
		if b.failures.Load() != 0 {
			b.failures.Store(0)
		}
		return
	}
	if b.failures.Add(1) < int64(b.threshold) {
		return
	}
	b.trip()
}

// trip opens the breaker and starts the probe, unless one runs already.
func (b *breaker) trip() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.probing {
		return
	}
	b.probing = true
	b.open.Store(true)
	b.opens.Add(1)
	go b.probeUntilClosed()
}

func (b *breaker) probeUntilClosed() {
	wait := b.minOpen
	for {
		select {
		case <-b.stop:
			return
		case <-time.After(wait):
		}
		ctx, cancel := context.WithTimeout(context.Background(), breakerProbeTimeout)
		err := b.probe(ctx)
		cancel()
		if err == nil {
			b.mu.Lock()
			b.failures.Store(0)
			b.open.Store(false)
			b.probing = false
			b.mu.Unlock()
			return
		}
		wait = min(2*wait, b.maxOpen)
	}
}

// BreakerState is what the breaker reports for metrics.
type BreakerState struct {
	// Open is true while calls fail fast.
	Open bool
	// Opens counts how often the breaker opened since the start.
	Opens uint64
}

func (b *breaker) state() BreakerState {
	if b == nil {
		return BreakerState{}
	}
	return BreakerState{Open: b.open.Load(), Opens: b.opens.Load()}
}
