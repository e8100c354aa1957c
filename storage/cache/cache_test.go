package cache

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/storage/storagetest"
)

func TestMemory(t *testing.T) {
	storagetest.RunCacheTests(t, func(t *testing.T) storage.Cache {
		m := NewMemory(nil)
		t.Cleanup(func() { _ = m.Close() })
		return m
	})
}

// TestRedis runs the cache suite with redisotel's hook installed (a
// tracer provider given, or the global one) and without it (NoTracing,
// what the server asks for while tracing is off): the autopipelined
// commands take a path of their own in each.
func TestRedis(t *testing.T) {
	url := storagetest.RedisURL(t)
	admin := adminClient(t, url)
	for _, noTracing := range []bool{false, true} {
		t.Run(fmt.Sprintf("NoTracing=%v", noTracing), func(t *testing.T) {
			storagetest.RunCacheTests(t, func(t *testing.T) storage.Cache {
				return newTestRedisWith(t, url, admin, &RedisOptions{NoTracing: noTracing})
			})
		})
	}
}

// newBubbleMemory is called inside a synctest bubble: the cache reads the
// time package's clock, which the test moves with time.Sleep, and its
// janitor ticks on that clock too.
func newBubbleMemory(t *testing.T, sweep time.Duration) *Memory {
	t.Helper()
	m := NewMemory(&MemoryOptions{SweepInterval: sweep})
	t.Cleanup(func() { _ = m.Close() })
	return m
}

func TestMemoryExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		m := newBubbleMemory(t, -1)
		const ttl = 10 * time.Second

		if err := m.Set(ctx, "set", []byte("v"), ttl); err != nil {
			t.Fatal(err)
		}
		if ok, err := m.SetNX(ctx, "setnx", []byte("v"), ttl); err != nil || !ok {
			t.Fatalf("SetNX = %v, %v", ok, err)
		}
		if n, err := m.Incr(ctx, "incr", ttl); err != nil || n != 1 {
			t.Fatalf("Incr = %d, %v", n, err)
		}

		time.Sleep(6 * time.Second)
		if n, err := m.Incr(ctx, "incr", ttl); err != nil || n != 2 {
			t.Fatalf("Incr inside the window = %d, %v; want 2", n, err)
		}

		time.Sleep(ttl - 6*time.Second - time.Nanosecond)
		for _, k := range []string{"set", "setnx", "incr"} {
			if _, err := m.Get(ctx, k); err != nil {
				t.Fatalf("Get %s 1ns before its ttl: %v", k, err)
			}
		}

		// Exactly ttl after the writes everything is gone, the counter too,
		// although its second increment was only 4s ago: a fixed window.
		time.Sleep(time.Nanosecond)
		for _, k := range []string{"set", "setnx", "incr"} {
			if _, err := m.Get(ctx, k); !errors.Is(err, storage.ErrCacheMiss) {
				t.Errorf("Get %s at its ttl: err = %v, want ErrCacheMiss", k, err)
			}
		}
		if v, err := m.GetMulti(ctx, "set", "setnx"); err != nil || len(v) != 2 || v[0] != nil || v[1] != nil {
			t.Errorf("GetMulti of expired keys = %q, %v; want misses", v, err)
		}
		if _, err := m.GetDel(ctx, "set"); !errors.Is(err, storage.ErrCacheMiss) {
			t.Errorf("GetDel of an expired key: err = %v, want ErrCacheMiss", err)
		}
		if ok, err := m.SetNX(ctx, "setnx", []byte("again"), ttl); err != nil || !ok {
			t.Errorf("SetNX of an expired key = %v, %v; want true", ok, err)
		}
		if n, err := m.Incr(ctx, "incr", ttl); err != nil || n != 1 {
			t.Errorf("Incr after the window = %d, %v; want 1", n, err)
		}
	})
}

func TestMemoryAllow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		m := newBubbleMemory(t, -1)
		limit := storage.Limit{Rate: 10, Period: time.Second, Burst: 2} // one every 100ms

		allow := func(wantOK bool, wantRetry time.Duration) {
			t.Helper()
			ok, retry, err := m.Allow(ctx, "k", limit)
			if err != nil || ok != wantOK || retry != wantRetry {
				t.Fatalf("Allow = %v, %s, %v; want %v, %s", ok, retry, err, wantOK, wantRetry)
			}
		}
		allow(true, 0)
		allow(true, 0)
		allow(false, 100*time.Millisecond)
		time.Sleep(40 * time.Millisecond)
		allow(false, 60*time.Millisecond)
		time.Sleep(60 * time.Millisecond)
		allow(true, 0)
		allow(false, 100*time.Millisecond)
		// Idle for long enough, the whole burst is back, and no more.
		time.Sleep(time.Hour)
		allow(true, 0)
		allow(true, 0)
		allow(false, 100*time.Millisecond)
	})
}

func TestMemorySweep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		m := newBubbleMemory(t, -1)

		for _, k := range []string{"a", "b", "c"} {
			if err := m.Set(ctx, k, []byte(k), time.Second); err != nil {
				t.Fatal(err)
			}
		}
		if err := m.Set(ctx, "long", []byte("l"), time.Hour); err != nil {
			t.Fatal(err)
		}
		if _, _, err := m.Allow(ctx, "rate", storage.Limit{Rate: 1, Period: time.Second, Burst: 1}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second)
		m.sweep()

		m.mu.Lock()
		defer m.mu.Unlock()
		if len(m.entries) != 1 {
			t.Errorf("after a sweep %d entries remain, want 1 (the live one)", len(m.entries))
		}
		if _, ok := m.entries["long"]; !ok {
			t.Error("sweep dropped a live entry")
		}
		if len(m.tats) != 0 {
			t.Errorf("after a sweep %d drained rate-limit states remain, want 0", len(m.tats))
		}
	})
}

// TestMemoryJanitor checks that expired entries nobody reads again are
// dropped in the background, which is what bounds the memory.
func TestMemoryJanitor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newBubbleMemory(t, 5*time.Millisecond)
		if err := m.Set(t.Context(), "k", []byte("v"), time.Second); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second + 5*time.Millisecond)
		synctest.Wait()
		m.mu.Lock()
		n := len(m.entries)
		m.mu.Unlock()
		if n != 0 {
			t.Fatal("the janitor did not drop an expired entry within one sweep interval")
		}
	})
}

// TestMemorySlowSubscriber: a subscriber that does not read must cost the
// publisher nothing; it loses what does not fit its buffer.
func TestMemorySlowSubscriber(t *testing.T) {
	ctx := t.Context()
	m := NewMemory(&MemoryOptions{SubscriberBuffer: 2})
	t.Cleanup(func() { _ = m.Close() })
	sub, err := m.Subscribe(ctx, "ch")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		for _, msg := range []string{"1", "2", "3", "4", "5"} {
			if err := m.Publish(ctx, "ch", []byte(msg)); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Publish blocked on a subscriber that does not read")
	}
	for _, want := range []string{"1", "2"} {
		if got := <-sub; string(got) != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
	select {
	case got := <-sub:
		t.Fatalf("got %q beyond the buffer of 2", got)
	default:
	}
}

// TestRedisPrefix checks, from outside, that every key and channel the cache
// touches carries its prefix, so deployments sharing a Redis do not collide.
func TestRedisPrefix(t *testing.T) {
	ctx := t.Context()
	url := storagetest.RedisURL(t)
	admin := adminClient(t, url)
	r := newTestRedis(t, url, admin)
	k := storage.CacheKey(7, "code", "abc")

	if err := r.Set(ctx, k, []byte("v"), time.Minute); err != nil {
		t.Fatal(err)
	}
	if got, err := admin.Get(ctx, r.prefix+k).Result(); err != nil || got != "v" {
		t.Errorf("GET %s%s = %q, %v; want the value under the prefixed key", r.prefix, k, got, err)
	}
	if n, err := admin.Exists(ctx, k).Result(); err != nil || n != 0 {
		t.Errorf("EXISTS %s (unprefixed) = %d, %v; want 0", k, n, err)
	}
	if _, _, err := r.Allow(ctx, k, storage.Limit{Rate: 1, Period: time.Minute, Burst: 1}); err != nil {
		t.Fatal(err)
	}
	if n, err := admin.Exists(ctx, "rate:"+r.prefix+k).Result(); err != nil || n != 1 {
		t.Errorf("rate-limit state under the prefix: EXISTS = %d, %v; want 1", n, err)
	}

	ps := admin.Subscribe(ctx, r.prefix+k)
	t.Cleanup(func() { _ = ps.Close() })
	if _, err := ps.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.Publish(ctx, k, []byte("m")); err != nil {
		t.Fatal(err)
	}
	msg, err := ps.ReceiveMessage(ctx)
	if err != nil || msg.Payload != "m" {
		t.Errorf("message on the prefixed channel = %v, %v; want %q", msg, err, "m")
	}
}

// TestRedisKeysExpire: deployments run Redis with noeviction, so a key
// without an expiry would stay until someone deletes it. Every write must
// leave a ttl on what it writes.
func TestRedisKeysExpire(t *testing.T) {
	ctx := t.Context()
	url := storagetest.RedisURL(t)
	admin := adminClient(t, url)
	r := newTestRedis(t, url, admin)

	if err := r.Set(ctx, "set", []byte("v"), time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := r.SetNX(ctx, "setnx", []byte("v"), 1500*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := r.Incr(ctx, "incr", time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	// A sub-millisecond ttl must not round to "no expiry".
	if _, err := r.Incr(ctx, "tiny", time.Microsecond); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.Allow(ctx, "rate", storage.Limit{Rate: 5, Period: time.Second, Burst: 5}); err != nil {
		t.Fatal(err)
	}

	keys := scanPrefix(t, admin, r.prefix)
	if len(keys) < 4 {
		t.Fatalf("found only %d keys under the prefix: %q", len(keys), keys)
	}
	for _, k := range keys {
		ttl, err := admin.PTTL(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if ttl == -1 {
			t.Errorf("key %q has no expiry", k)
		}
		if ttl > time.Minute {
			t.Errorf("key %q expires in %s, later than any ttl given", k, ttl)
		}
	}
}

func TestRedisUnreachable(t *testing.T) {
	// A port that was free a moment ago: nothing listens there.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	r, err := NewRedis(ctx, "redis://"+addr+"/0", nil)
	if !errors.Is(err, storage.ErrUnavailable) {
		t.Fatalf("NewRedis of an unreachable server: err = %v, want ErrUnavailable", err)
	}
	if r != nil {
		t.Fatal("NewRedis returned a cache together with an error")
	}
}

func TestRedisClosedIsUnavailable(t *testing.T) {
	url := storagetest.RedisURL(t)
	r, err := NewRedis(t.Context(), url, &RedisOptions{Prefix: randomPrefix(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	checks := map[string]error{
		"Set":     r.Set(ctx, "k", []byte("v"), time.Minute),
		"Delete":  r.Delete(ctx, "k"),
		"Publish": r.Publish(ctx, "k", []byte("v")),
	}
	_, checks["GetDel"] = r.GetDel(ctx, "k")
	_, checks["Incr"] = r.Incr(ctx, "k", time.Minute)
	_, _, checks["Allow"] = r.Allow(ctx, "k", storage.Limit{Rate: 1, Period: time.Second, Burst: 1})
	_, checks["Subscribe"] = r.Subscribe(ctx, "k")
	for op, err := range checks {
		if !errors.Is(err, storage.ErrUnavailable) {
			t.Errorf("%s on a closed Redis: err = %v, want ErrUnavailable", op, err)
		}
	}
}

func TestNewRedisInvalidConfig(t *testing.T) {
	for _, tc := range []struct {
		name, url, prefix string
	}{
		{"scheme", "http://127.0.0.1:6379/0", ""},
		{"database", "redis://127.0.0.1:6379/notanumber", ""},
		{"unparsable, with a password", "redis://user:s3cret@127.0.0.1:bad port/0", ""},
		{"brace in prefix", "redis://127.0.0.1:6379/0", "tenant{1}:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewRedis(t.Context(), tc.url, &RedisOptions{Prefix: tc.prefix})
			if err == nil {
				_ = r.Close()
				t.Fatal("NewRedis accepted an invalid configuration")
			}
			if errors.Is(err, storage.ErrUnavailable) {
				t.Errorf("a configuration error wraps ErrUnavailable: %v", err)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("the error shows the password: %v", err)
			}
		})
	}
}

func TestMapErr(t *testing.T) {
	for _, tc := range []struct {
		name            string
		err             error
		miss, unavail   bool
		keepsOriginalIs error
	}{
		{"nil reply is a miss", redis.Nil, true, false, nil},
		{"closed client", redis.ErrClosed, false, true, redis.ErrClosed},
		{"pool timeout", redis.ErrPoolTimeout, false, true, redis.ErrPoolTimeout},
		{"dial error", &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}, false, true, nil},
		{"deadline", context.DeadlineExceeded, false, true, context.DeadlineExceeded},
		{"caller canceled", context.Canceled, false, false, context.Canceled},
		{"loading", redisErr("LOADING Redis is loading the dataset in memory"), false, true, nil},
		{"out of memory", redisErr("OOM command not allowed when used memory > 'maxmemory'."), false, true, nil},
		{"wrong type is the request's fault", redisErr("WRONGTYPE Operation against a key holding the wrong kind of value"), false, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := mapErr("OP", tc.err)
			if got := errors.Is(err, storage.ErrCacheMiss); got != tc.miss {
				t.Errorf("errors.Is(%v, ErrCacheMiss) = %v, want %v", err, got, tc.miss)
			}
			if got := errors.Is(err, storage.ErrUnavailable); got != tc.unavail {
				t.Errorf("errors.Is(%v, ErrUnavailable) = %v, want %v", err, got, tc.unavail)
			}
			if tc.keepsOriginalIs != nil && !errors.Is(err, tc.keepsOriginalIs) {
				t.Errorf("%v lost %v from its chain", err, tc.keepsOriginalIs)
			}
		})
	}
	if mapErr("OP", nil) != nil {
		t.Error("mapErr(nil) != nil")
	}
}

// redisErr is a server error reply as go-redis reports it.
func redisErr(msg string) error {
	return &testRedisError{msg}
}

type testRedisError struct{ msg string }

func (e *testRedisError) Error() string { return e.msg }
func (e *testRedisError) RedisError()   {}

// adminClient is a plain go-redis client for looking behind the cache and
// removing what tests wrote.
func adminClient(t *testing.T, url string) *redis.Client {
	t.Helper()
	o, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(o)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// newTestRedis opens a cache with a prefix of its own, so that parallel
// tests and packages sharing the Redis never collide, and deletes every key
// under that prefix afterwards (never FLUSHDB: the Redis may be shared).
func newTestRedis(t *testing.T, url string, admin *redis.Client) *Redis {
	t.Helper()
	return newTestRedisWith(t, url, admin, nil)
}

// newTestRedisWith is newTestRedis with opts (nil: the defaults); its
// Prefix is replaced by a random one.
func newTestRedisWith(t *testing.T, url string, admin *redis.Client, opts *RedisOptions) *Redis {
	t.Helper()
	prefix := randomPrefix(t)
	var o RedisOptions
	if opts != nil {
		o = *opts
	}
	o.Prefix = prefix
	r, err := NewRedis(t.Context(), url, &o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = r.Close()
		if keys := scanPrefix(t, admin, prefix); len(keys) > 0 {
			if err := admin.Del(context.Background(), keys...).Err(); err != nil {
				t.Errorf("removing test keys: %v", err)
			}
		}
	})
	return r
}

func randomPrefix(t *testing.T) string {
	t.Helper()
	return "lectern-test:" + rand.Text() + ":"
}

// scanPrefix lists the keys the cache wrote under prefix, rate-limit state
// included (redis_rate puts its own prefix in front of ours).
func scanPrefix(t *testing.T, admin *redis.Client, prefix string) []string {
	t.Helper()
	ctx := context.Background()
	var keys []string
	for _, pattern := range []string{prefix + "*", "rate:" + prefix + "*"} {
		iter := admin.Scan(ctx, 0, pattern, 100).Iterator()
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		if err := iter.Err(); err != nil {
			t.Errorf("scanning %s: %v", pattern, err)
		}
	}
	return keys
}

// The contract holds with every command on its own round trip too.
func TestRedisNoAutoPipeline(t *testing.T) {
	url := storagetest.RedisURL(t)
	admin := adminClient(t, url)
	storagetest.RunCacheTests(t, func(t *testing.T) storage.Cache {
		prefix := randomPrefix(t)
		r, err := NewRedis(t.Context(), url, &RedisOptions{Prefix: prefix, NoAutoPipeline: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = r.Close()
			if keys := scanPrefix(t, admin, prefix); len(keys) > 0 {
				_ = admin.Del(context.Background(), keys...).Err()
			}
		})
		return r
	})
}

// A caller's deadline bounds its wait on a Redis that stopped answering,
// with or without the autopipeliner (whose batches run on their own
// context): the request fails fast as unavailable instead of hanging for
// the connection's read timeout.
func TestRedisStalledHonoursDeadline(t *testing.T) {
	url := storagetest.RedisURL(t)
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	for _, noAP := range []bool{false, true} {
		t.Run(map[bool]string{false: "autopipeline", true: "plain"}[noAP], func(t *testing.T) {
			p := newFreezeProxy(t, opts.Addr)
			// No breaker: every call must reach the stalled server.
			r, err := NewRedis(t.Context(), "redis://"+p.addr()+"/"+strconv.Itoa(opts.DB), &RedisOptions{Prefix: randomPrefix(t), NoAutoPipeline: noAP, BreakerThreshold: -1})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if err := r.Set(t.Context(), "k", []byte("v"), time.Minute); err != nil {
				t.Fatal(err)
			}
			p.freeze()
			defer p.thaw()
			calls := map[string]func(ctx context.Context) error{
				"Get":      func(ctx context.Context) error { _, err := r.Get(ctx, "k"); return err },
				"GetMulti": func(ctx context.Context) error { _, err := r.GetMulti(ctx, "k", "j"); return err },
				"GetDel":   func(ctx context.Context) error { _, err := r.GetDel(ctx, "k"); return err },
				"Set":      func(ctx context.Context) error { return r.Set(ctx, "k", []byte("w"), time.Minute) },
			}
			for name, call := range calls {
				ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
				start := time.Now()
				err := call(ctx)
				cancel()
				if !errors.Is(err, storage.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("%s on a stalled Redis: %v; want unavailable, deadline exceeded", name, err)
				}
				// go-redis' own read timeout is 3 s; the caller's 100 ms must win.
				if d := time.Since(start); d > 2*time.Second {
					t.Errorf("%s waited %v past a 100 ms deadline", name, d)
				}
			}
		})
	}
}

// Without a deadline of its own, or with a long one, a caller waits on a
// stalled Redis no longer than OpTimeout: requests fail fast as
// unavailable instead of hanging.
func TestRedisStalledBoundsEveryCall(t *testing.T) {
	url := storagetest.RedisURL(t)
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	p := newFreezeProxy(t, opts.Addr)
	r, err := NewRedis(t.Context(), "redis://"+p.addr()+"/"+strconv.Itoa(opts.DB), &RedisOptions{Prefix: randomPrefix(t), OpTimeout: 200 * time.Millisecond, ReadTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p.freeze()
	defer p.thaw()
	long, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for name, ctx := range map[string]context.Context{"no deadline": context.Background(), "a minute": long} {
		start := time.Now()
		_, err := r.GetMulti(ctx, "a", "b")
		if !errors.Is(err, storage.ErrUnavailable) {
			t.Errorf("%s: %v; want unavailable", name, err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s: waited %v on a stalled Redis; want about the 200 ms OpTimeout", name, d)
		}
	}
}

// freezeProxy forwards TCP to Redis until frozen; then it holds every byte
// until thawed, as a stalled server or network would.
type freezeProxy struct {
	ln     net.Listener
	mu     sync.Mutex
	frozen chan struct{} // closed when thawed; nil when not frozen
}

func newFreezeProxy(t *testing.T, target string) *freezeProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &freezeProxy{ln: ln}
	t.Cleanup(func() { p.thaw(); _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				_ = c.Close()
				continue
			}
			go p.pipe(up, c)
			go p.pipe(c, up)
		}
	}()
	return p
}

func (p *freezeProxy) addr() string { return p.ln.Addr().String() }

func (p *freezeProxy) pipe(dst, src net.Conn) {
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			wait := p.frozen
			p.mu.Unlock()
			if wait != nil {
				<-wait
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *freezeProxy) freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.frozen == nil {
		p.frozen = make(chan struct{})
	}
}

func (p *freezeProxy) thaw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.frozen != nil {
		close(p.frozen)
		p.frozen = nil
	}
}

// A subscription whose connection was lost ends (its channel closes) even
// though go-redis reconnects and subscribes again by itself: messages
// published in between are lost, and the subscriber must know to treat
// what it cached as stale.
func TestRedisSubscriptionEndsOnReconnect(t *testing.T) {
	url := storagetest.RedisURL(t)
	name := "lectern-sub-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	r, err := NewRedis(t.Context(), url+sep+"client_name="+name, &RedisOptions{Prefix: randomPrefix(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ch, err := r.Subscribe(t.Context(), "news")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Publish(t.Context(), "news", []byte("one")); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-ch:
		if string(m) != "one" {
			t.Fatalf("got %q", m)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no message")
	}
	// Kill this cache's connections (only these: the name is ours).
	admin := adminClient(t, url)
	list, err := admin.ClientList(t.Context()).Result()
	if err != nil {
		t.Fatal(err)
	}
	killed := 0
	for _, line := range strings.Split(list, "\n") {
		if !strings.Contains(line, " name="+name+" ") {
			continue
		}
		for _, f := range strings.Fields(line) {
			if id, ok := strings.CutPrefix(f, "id="); ok {
				if err := admin.Do(t.Context(), "CLIENT", "KILL", "ID", id).Err(); err == nil {
					killed++
				}
			}
		}
	}
	if killed == 0 {
		t.Fatalf("no connection named %s in\n%s", name, list)
	}
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the subscription went on after its connection was lost")
		}
	}
}
