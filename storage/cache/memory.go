package cache

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/lectern/lectern/storage"
)

var _ storage.Cache = (*Memory)(nil)

// Defaults of MemoryOptions.
const (
	DefaultSweepInterval    = time.Minute
	DefaultSubscriberBuffer = 64
)

// errMemoryClosed answers every call on a closed Memory. It wraps
// storage.ErrUnavailable because, to a caller, a closed cache is one that
// cannot be reached.
var errMemoryClosed = fmt.Errorf("cache: memory cache closed: %w", storage.ErrUnavailable)

// MemoryOptions configures NewMemory. A nil *MemoryOptions and the zero value
// both give the defaults.
type MemoryOptions struct {
	// Now is the clock expiry and rate limits are measured against; tests
	// pass a fake one. Default time.Now.
	Now func() time.Time
	// SweepInterval is how often a background janitor drops expired entries.
	// Reads drop the expired entries they meet, but keys written once and
	// never read again would otherwise stay forever. Default
	// DefaultSweepInterval; a negative value disables the janitor.
	SweepInterval time.Duration
	// SubscriberBuffer is how many messages a subscriber may fall behind
	// before further messages to it are dropped (delivery is best effort,
	// as on Redis). Default DefaultSubscriberBuffer.
	SubscriberBuffer int
}

// Memory is the in-process storage.Cache of the embedded default. It is safe
// for concurrent use. Every entry has an expiry (Set, SetNX and Incr refuse a
// ttl <= 0), so the janitor bounds its memory to what is live.
type Memory struct {
	now     func() time.Time
	subsBuf int

	mu      sync.Mutex
	entries map[string]entry
	tats    map[string]time.Time // GCRA theoretical arrival time per rate-limit key
	subs    map[string]map[*subscription]struct{}
	closed  bool

	stop        chan struct{} // closed by Close
	janitorDone chan struct{} // nil when the janitor is disabled
}

type entry struct {
	value   []byte
	hash    map[string][]byte // non-nil for a hash (HashReplace)
	expires time.Time
}

type subscription struct {
	ch chan []byte
}

// NewMemory returns an empty in-memory cache. Close it to stop its janitor.
func NewMemory(opts *MemoryOptions) *Memory {
	var o MemoryOptions
	if opts != nil {
		o = *opts
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.SweepInterval == 0 {
		o.SweepInterval = DefaultSweepInterval
	}
	if o.SubscriberBuffer <= 0 {
		o.SubscriberBuffer = DefaultSubscriberBuffer
	}
	m := &Memory{
		now:     o.Now,
		subsBuf: o.SubscriberBuffer,
		entries: make(map[string]entry),
		tats:    make(map[string]time.Time),
		subs:    make(map[string]map[*subscription]struct{}),
		stop:    make(chan struct{}),
	}
	if o.SweepInterval > 0 {
		m.janitorDone = make(chan struct{})
		go m.janitor(o.SweepInterval)
	}
	return m
}

// begin locks m for one operation, or says why the operation cannot run.
// On success the caller must unlock m.mu.
func (m *Memory) begin(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return errMemoryClosed
	}
	return nil
}

// lookup returns the live entry under key, dropping it if it has expired.
// m.mu must be held.
func (m *Memory) lookup(key string, now time.Time) (entry, bool) {
	e, ok := m.entries[key]
	if !ok {
		return entry{}, false
	}
	if !now.Before(e.expires) {
		delete(m.entries, key)
		return entry{}, false
	}
	return e, true
}

// Get implements storage.Cache.
func (m *Memory) Get(ctx context.Context, key string) ([]byte, error) {
	if err := m.begin(ctx); err != nil {
		return nil, err
	}
	defer m.mu.Unlock()
	e, ok := m.lookup(key, m.now())
	if !ok {
		return nil, storage.ErrCacheMiss
	}
	if e.hash != nil {
		return nil, errWrongType(key)
	}
	return clone(e.value), nil
}

// GetMulti implements storage.Cache.
func (m *Memory) GetMulti(ctx context.Context, keys ...string) ([][]byte, error) {
	if err := m.begin(ctx); err != nil {
		return nil, err
	}
	defer m.mu.Unlock()
	now := m.now()
	out := make([][]byte, len(keys))
	for i, k := range keys {
		// Like MGET, a hash reads as a miss.
		if e, ok := m.lookup(k, now); ok && e.hash == nil {
			out[i] = clone(e.value)
		}
	}
	return out, nil
}

// Set implements storage.Cache.
func (m *Memory) Set(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if err := checkTTL(ttl); err != nil {
		return err
	}
	if err := m.begin(ctx); err != nil {
		return err
	}
	defer m.mu.Unlock()
	m.entries[key] = entry{value: clone(value), expires: m.now().Add(ttl)}
	return nil
}

// SetNX implements storage.Cache.
func (m *Memory) SetNX(ctx context.Context, key string, value []byte, ttl time.Duration) (bool, error) {
	if err := checkTTL(ttl); err != nil {
		return false, err
	}
	if err := m.begin(ctx); err != nil {
		return false, err
	}
	defer m.mu.Unlock()
	now := m.now()
	if _, ok := m.lookup(key, now); ok {
		return false, nil
	}
	m.entries[key] = entry{value: clone(value), expires: now.Add(ttl)}
	return true, nil
}

// GetDel implements storage.Cache.
func (m *Memory) GetDel(ctx context.Context, key string) ([]byte, error) {
	if err := m.begin(ctx); err != nil {
		return nil, err
	}
	defer m.mu.Unlock()
	e, ok := m.lookup(key, m.now())
	if !ok {
		return nil, storage.ErrCacheMiss
	}
	if e.hash != nil {
		return nil, errWrongType(key)
	}
	delete(m.entries, key)
	// The entry leaves the map, so nobody else can see its bytes: no copy.
	return e.value, nil
}

// Delete implements storage.Cache.
func (m *Memory) Delete(ctx context.Context, keys ...string) error {
	if err := m.begin(ctx); err != nil {
		return err
	}
	defer m.mu.Unlock()
	for _, k := range keys {
		delete(m.entries, k)
	}
	return nil
}

// Incr implements storage.Cache. Like Redis, it keeps the counter as a
// decimal string, so Get on a counter answers the same on both backends.
func (m *Memory) Incr(ctx context.Context, key string, ttl time.Duration) (int64, error) {
	if err := checkTTL(ttl); err != nil {
		return 0, err
	}
	if err := m.begin(ctx); err != nil {
		return 0, err
	}
	defer m.mu.Unlock()
	now := m.now()
	e, ok := m.lookup(key, now)
	if !ok {
		m.entries[key] = entry{value: []byte("1"), expires: now.Add(ttl)}
		return 1, nil
	}
	if e.hash != nil {
		return 0, errWrongType(key)
	}
	n, err := strconv.ParseInt(string(e.value), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("cache: incr %q: value is not an integer", key)
	}
	if n == math.MaxInt64 {
		return 0, fmt.Errorf("cache: incr %q: counter would overflow", key)
	}
	n++
	m.entries[key] = entry{value: strconv.AppendInt(nil, n, 10), expires: e.expires}
	return n, nil
}

// Publish implements storage.Cache. A subscriber whose buffer is full misses
// the message rather than stalling the publisher and every other subscriber.
func (m *Memory) Publish(ctx context.Context, channel string, message []byte) error {
	if err := m.begin(ctx); err != nil {
		return err
	}
	defer m.mu.Unlock()
	for s := range m.subs[channel] {
		select {
		case s.ch <- clone(message):
		default:
		}
	}
	return nil
}

// Subscribe implements storage.Cache. The channel also closes when m is
// closed.
func (m *Memory) Subscribe(ctx context.Context, channel string) (<-chan []byte, error) {
	if err := m.begin(ctx); err != nil {
		return nil, err
	}
	s := &subscription{ch: make(chan []byte, m.subsBuf)}
	if m.subs[channel] == nil {
		m.subs[channel] = make(map[*subscription]struct{})
	}
	m.subs[channel][s] = struct{}{}
	m.mu.Unlock()

	go func() {
		select {
		case <-ctx.Done():
		case <-m.stop:
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		// Close may have closed the channel already; only the one who takes
		// s out of the map closes it, and sends happen under m.mu, so no
		// send can hit a closed channel.
		if _, ok := m.subs[channel][s]; ok {
			delete(m.subs[channel], s)
			if len(m.subs[channel]) == 0 {
				delete(m.subs, channel)
			}
			close(s.ch)
		}
	}()
	return s.ch, nil
}

// Allow implements storage.Cache with the generic cell rate algorithm, the
// algorithm redis_rate runs on Redis, so both backends admit the same
// events: one event every Period/Rate, with up to Burst at once.
func (m *Memory) Allow(ctx context.Context, key string, limit storage.Limit) (bool, time.Duration, error) {
	n, retry, err := m.AllowAtMost(ctx, key, limit, 1)
	return n == 1, retry, err
}

// AllowAtMost implements storage.Cache: as many of n events as the GCRA
// state admits now, each moving the theoretical arrival time one interval.
func (m *Memory) AllowAtMost(ctx context.Context, key string, limit storage.Limit, n int) (int, time.Duration, error) {
	if err := checkLimit(limit); err != nil {
		return 0, 0, err
	}
	if n < 1 {
		return 0, 0, fmt.Errorf("cache: AllowAtMost of %d events", n)
	}
	if err := m.begin(ctx); err != nil {
		return 0, 0, err
	}
	defer m.mu.Unlock()
	now := m.now()
	interval := limit.Period / time.Duration(limit.Rate)
	tat, ok := m.tats[key]
	if !ok || tat.Before(now) {
		tat = now
	}
	// Event k (from 1) is admitted while tat + k·interval − burst·interval ≤ now.
	room := int((now.Sub(tat) + interval*time.Duration(limit.Burst)) / interval)
	taken := min(n, room)
	if taken < 1 {
		// A refusal leaves the state alone: refusals do not push the
		// caller's next chance further out.
		return 0, tat.Add(interval - interval*time.Duration(limit.Burst)).Sub(now), nil
	}
	m.tats[key] = tat.Add(interval * time.Duration(taken))
	return taken, 0, nil
}

// Ping implements storage.Cache: it fails only once m is closed.
func (m *Memory) Ping(ctx context.Context) error {
	if err := m.begin(ctx); err != nil {
		return err
	}
	m.mu.Unlock()
	return nil
}

// Close drops every entry, closes every subscription channel and stops the
// janitor. Calls on a closed Memory fail with an error wrapping
// storage.ErrUnavailable; closing again is a no-op.
func (m *Memory) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	for _, subs := range m.subs {
		for s := range subs {
			close(s.ch)
		}
	}
	m.subs, m.entries, m.tats = nil, nil, nil
	m.mu.Unlock()

	close(m.stop)
	if m.janitorDone != nil {
		<-m.janitorDone
	}
	return nil
}

func (m *Memory) janitor(interval time.Duration) {
	defer close(m.janitorDone)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-t.C:
			m.sweep()
		}
	}
}

// sweep drops every expired entry and every rate-limit state that has
// drained back to "never seen".
func (m *Memory) sweep() {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	for k, e := range m.entries {
		if !now.Before(e.expires) {
			delete(m.entries, k)
		}
	}
	for k, tat := range m.tats {
		if !now.Before(tat) {
			delete(m.tats, k)
		}
	}
}

// clone copies b so that neither the caller nor the cache can change the
// other's bytes; a nil b becomes an empty value, which is not a miss.
func clone(b []byte) []byte {
	return append(make([]byte, 0, len(b)), b...)
}

// The checks below are shared by both backends, so that they refuse the same
// arguments.

var (
	errTTL   = errors.New("cache: ttl must be positive")
	errLimit = errors.New("cache: rate limit needs positive Rate, Period and Burst, and Period of at least Rate nanoseconds")
)

// checkTTL refuses a ttl <= 0: every entry must expire, or the in-memory
// cache would grow without bound and Redis (run with noeviction) would fill.
func checkTTL(ttl time.Duration) error {
	if ttl <= 0 {
		return fmt.Errorf("%w (got %s)", errTTL, ttl)
	}
	return nil
}

// checkLimit refuses limits the algorithm cannot apply: a zero Rate or
// Period divides by zero, a zero Burst would refuse every event, and a
// Period shorter than Rate nanoseconds would round the interval between
// events to zero and admit everything.
func checkLimit(l storage.Limit) error {
	if l.Rate <= 0 || l.Period <= 0 || l.Burst <= 0 || l.Period < time.Duration(l.Rate) {
		return fmt.Errorf("%w (got %d per %s, burst %d)", errLimit, l.Rate, l.Period, l.Burst)
	}
	return nil
}
