package storagetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// The two sites every cache test writes for.
const (
	cacheSiteA tenant.ID = 1
	cacheSiteB tenant.ID = 2
)

// cacheMsgTimeout bounds every wait for a published message or a closing
// channel; a correct backend delivers in milliseconds.
const cacheMsgTimeout = 5 * time.Second

// RunCacheTests runs the storage.Cache contract against a backend.
//
// newCache is called once per subtest, concurrently (the subtests run in
// parallel so that the ones waiting on real expiry overlap), and must return
// a cache in which no key or channel of any other call is visible: a fresh
// in-memory cache, or a Redis client with its own key prefix. It should
// register the cache's Close with t.Cleanup; the suite closes some caches
// itself, so Close must tolerate a second call. RunCacheTests returns when
// every subtest has finished.
func RunCacheTests(t *testing.T, newCache func(t *testing.T) storage.Cache) {
	t.Helper()
	tests := []struct {
		name string
		run  func(t *testing.T, c storage.Cache)
	}{
		{"GetSet", testCacheGetSet},
		{"InvalidTTL", testCacheInvalidTTL},
		{"Expiry", testCacheExpiry},
		{"GetMulti", testCacheGetMulti},
		{"SetNX", testCacheSetNX},
		{"SetNXConcurrent", testCacheSetNXConcurrent},
		{"GetDel", testCacheGetDel},
		{"GetDelConcurrent", testCacheGetDelConcurrent},
		{"Delete", testCacheDelete},
		{"Incr", testCacheIncr},
		{"IncrConcurrent", testCacheIncrConcurrent},
		{"PublishSubscribe", testCachePublishSubscribe},
		{"SubscribeCancel", testCacheSubscribeCancel},
		{"Allow", testCacheAllow},
		{"AllowRefill", testCacheAllowRefill},
		{"AllowAtMost", testCacheAllowAtMost},
		{"AllowInvalidLimit", testCacheAllowInvalidLimit},
		{"SiteIsolation", testCacheSiteIsolation},
		{"BinaryValues", testCacheBinaryValues},
		{"CanceledContext", testCacheCanceledContext},
		{"Close", testCacheClose},
		{"Sets", testCacheSets},
		{"Hash", testCacheHash},
		{"HashExpiry", testCacheHashExpiry},
		{"HashConcurrent", testCacheHashConcurrent},
		{"HashSiteIsolation", testCacheHashSiteIsolation},
	}
	// The group keeps RunCacheTests from returning before its parallel
	// subtests have run, so callers may clean up after it returns.
	t.Run("Cache", func(t *testing.T) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				tt.run(t, newCache(t))
			})
		}
	})
}

// cacheKey returns a site-owned key the way production code builds them.
func cacheKey(site tenant.ID, id string) string {
	return storage.CacheKey(site, "test", id)
}

func testCacheGetSet(t *testing.T, c storage.Cache) {
	ctx := t.Context()
	k := cacheKey(cacheSiteA, "k")

	if _, err := c.Get(ctx, k); !errors.Is(err, storage.ErrCacheMiss) {
		t.Fatalf("Get of an absent key: err = %v, want ErrCacheMiss", err)
	}

	// Each row overwrites the previous value, so this also checks that Set
	// replaces, and that an empty value is a value, not a miss.
	for _, tc := range []struct {
		name  string
		value []byte
	}{
		{"text", []byte("code-1")},
		{"overwrite", []byte("code-2, longer than the first")},
		{"shorter", []byte("c3")},
		{"empty", []byte{}},
		{"nil is empty", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := c.Set(ctx, k, tc.value, time.Minute); err != nil {
				t.Fatalf("Set: %v", err)
			}
			got, err := c.Get(ctx, k)
			if err != nil {
				t.Fatalf("Get after Set: %v", err)
			}
			if !bytes.Equal(got, tc.value) {
				t.Fatalf("Get = %q, want %q", got, tc.value)
			}
		})
	}

	// Neither the caller's slice nor the returned one may alias the stored
	// value: an authorization code must not change because a handler
	// reused its buffer.
	in := []byte("original")
	if err := c.Set(ctx, k, in, time.Minute); err != nil {
		t.Fatalf("Set: %v", err)
	}
	copy(in, "XXXXXXXX")
	out, err := c.Get(ctx, k)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if string(out) != "original" {
		t.Fatalf("Get after the caller changed its slice = %q, want %q", out, "original")
	}
	copy(out, "YYYYYYYY")
	if again := cacheGet(t, c, k); string(again) != "original" {
		t.Fatalf("Get after the caller changed a returned slice = %q, want %q", again, "original")
	}
}

func testCacheInvalidTTL(t *testing.T, c storage.Cache) {
	ctx := t.Context()
	for _, tc := range []struct {
		name string
		ttl  time.Duration
	}{
		{"zero", 0},
		{"negative", -time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := cacheKey(cacheSiteA, "ttl-"+tc.name)
			if err := c.Set(ctx, k, []byte("v"), tc.ttl); err == nil {
				t.Errorf("Set with ttl %s: no error", tc.ttl)
			}
			if ok, err := c.SetNX(ctx, k, []byte("v"), tc.ttl); err == nil || ok {
				t.Errorf("SetNX with ttl %s = %v, %v; want an error", tc.ttl, ok, err)
			}
			if _, err := c.Incr(ctx, k, tc.ttl); err == nil {
				t.Errorf("Incr with ttl %s: no error", tc.ttl)
			}
			// A refused write must not have stored a key that never expires.
			if _, err := c.Get(ctx, k); !errors.Is(err, storage.ErrCacheMiss) {
				t.Errorf("Get after refused writes: err = %v, want ErrCacheMiss", err)
			}
		})
	}
}

// testCacheExpiry waits on real time once for Set, SetNX and Incr together,
// so that the suite stays fast.
func testCacheExpiry(t *testing.T, c storage.Cache) {
	ctx := t.Context()
	const ttl = time.Second
	var (
		kSet   = cacheKey(cacheSiteA, "exp-set")
		kSetNX = cacheKey(cacheSiteA, "exp-setnx")
		kIncr  = cacheKey(cacheSiteA, "exp-incr")
		kLong  = cacheKey(cacheSiteA, "exp-long")
	)

	start := time.Now()
	if err := c.Set(ctx, kSet, []byte("s"), ttl); err != nil {
		t.Fatalf("Set: %v", err)
	}
	if ok, err := c.SetNX(ctx, kSetNX, []byte("n"), ttl); err != nil || !ok {
		t.Fatalf("SetNX on an absent key = %v, %v; want true", ok, err)
	}
	if n, err := c.Incr(ctx, kIncr, ttl); err != nil || n != 1 {
		t.Fatalf("first Incr = %d, %v; want 1", n, err)
	}
	if err := c.Set(ctx, kLong, []byte("l"), time.Hour); err != nil {
		t.Fatalf("Set: %v", err)
	}
	for _, k := range []string{kSet, kSetNX} {
		if _, err := c.Get(ctx, k); err != nil {
			t.Fatalf("Get %s right after writing it: %v", k, err)
		}
	}

	// A second increment inside the window counts but must not move the
	// expiry: the window is fixed from the first increment.
	cacheSleepUntil(start.Add(400 * time.Millisecond))
	n, err := c.Incr(ctx, kIncr, ttl)
	if err != nil {
		t.Fatalf("second Incr: %v", err)
	}
	// On a machine that stalled past the window the second increment
	// rightly opened a new one; the window checks then prove nothing.
	inWindow := time.Since(start) < ttl-100*time.Millisecond
	if inWindow && n != 2 {
		t.Fatalf("second Incr inside the window = %d, want 2", n)
	}

	// Past the ttl from the first writes, but before ttl from the second
	// increment: a backend that restarted the ttl would still hold 2.
	cacheSleepUntil(start.Add(ttl + 250*time.Millisecond))
	for _, k := range []string{kSet, kSetNX} {
		if v, err := c.Get(ctx, k); !errors.Is(err, storage.ErrCacheMiss) {
			t.Errorf("Get %s after its ttl = %q, %v; want ErrCacheMiss", k, v, err)
		}
	}
	if v, err := c.GetMulti(ctx, kSet, kLong); err != nil || len(v) != 2 || v[0] != nil || string(v[1]) != "l" {
		t.Errorf("GetMulti(expired, live) = %q, %v; want [nil \"l\"]", v, err)
	}
	if ok, err := c.SetNX(ctx, kSetNX, []byte("again"), ttl); err != nil || !ok {
		t.Errorf("SetNX on an expired key = %v, %v; want true", ok, err)
	}
	if n, err := c.Incr(ctx, kIncr, ttl); err != nil || (inWindow && n != 1) {
		t.Errorf("Incr after the window ended = %d, %v; want 1 (a new window)", n, err)
	}
	if v := cacheGet(t, c, kLong); string(v) != "l" {
		t.Errorf("Get of a key with a long ttl = %q, want %q", v, "l")
	}
}

func testCacheGetMulti(t *testing.T, c storage.Cache) {
	ctx := t.Context()
	a, b, e := cacheKey(cacheSiteA, "a"), cacheKey(cacheSiteA, "b"), cacheKey(cacheSiteA, "empty")
	missing := cacheKey(cacheSiteA, "missing")
	cacheSet(t, c, a, []byte("A"))
	cacheSet(t, c, b, []byte("B"))
	cacheSet(t, c, e, []byte{})

	for _, tc := range []struct {
		name string
		keys []string
		want [][]byte // nil element: a miss
	}{
		{"none", nil, [][]byte{}},
		{"one", []string{a}, [][]byte{[]byte("A")}},
		{"order kept", []string{b, a}, [][]byte{[]byte("B"), []byte("A")}},
		{"misses in place", []string{missing, a, missing, b}, [][]byte{nil, []byte("A"), nil, []byte("B")}},
		{"duplicates", []string{a, a}, [][]byte{[]byte("A"), []byte("A")}},
		{"only misses", []string{missing, cacheKey(cacheSiteA, "other")}, [][]byte{nil, nil}},
		{"empty value is not a miss", []string{e, missing}, [][]byte{{}, nil}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := c.GetMulti(ctx, tc.keys...)
			if err != nil {
				t.Fatalf("GetMulti: %v", err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("GetMulti returned %d values, want %d: %q", len(got), len(tc.want), got)
			}
			for i := range got {
				if (got[i] == nil) != (tc.want[i] == nil) || !bytes.Equal(got[i], tc.want[i]) {
					t.Errorf("value %d (%s) = %s, want %s", i, tc.keys[i], cacheShow(got[i]), cacheShow(tc.want[i]))
				}
			}
		})
	}
}

func testCacheSetNX(t *testing.T, c storage.Cache) {
	ctx := t.Context()
	k := cacheKey(cacheSiteA, "lock")

	for _, step := range []struct {
		name   string
		value  string
		wantOK bool
		want   string // the value stored afterwards
	}{
		{"absent key is set", "first", true, "first"},
		{"present key is kept", "second", false, "first"},
		{"still kept", "third", false, "first"},
	} {
		ok, err := c.SetNX(ctx, k, []byte(step.value), time.Minute)
		if err != nil {
			t.Fatalf("%s: SetNX: %v", step.name, err)
		}
		if ok != step.wantOK {
			t.Fatalf("%s: SetNX = %v, want %v", step.name, ok, step.wantOK)
		}
		if got := cacheGet(t, c, k); string(got) != step.want {
			t.Fatalf("%s: Get = %q, want %q", step.name, got, step.want)
		}
	}

	// A value written by Set counts as present too.
	other := cacheKey(cacheSiteA, "set-first")
	cacheSet(t, c, other, []byte("by Set"))
	if ok, err := c.SetNX(ctx, other, []byte("by SetNX"), time.Minute); err != nil || ok {
		t.Fatalf("SetNX over a Set value = %v, %v; want false", ok, err)
	}

	if err := c.Delete(ctx, k); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if ok, err := c.SetNX(ctx, k, []byte("after delete"), time.Minute); err != nil || !ok {
		t.Fatalf("SetNX after Delete = %v, %v; want true", ok, err)
	}
	if got := cacheGet(t, c, k); string(got) != "after delete" {
		t.Fatalf("Get = %q, want %q", got, "after delete")
	}
}

// testCacheSetNXConcurrent: SetNX is how a process claims something once
// (a CIMD fetch, a one-time job); two winners would do it twice.
func testCacheSetNXConcurrent(t *testing.T, c storage.Cache) {
	const racers = 50
	k := cacheKey(cacheSiteA, "claim")
	results := cacheRace(t, racers, func(i int) (any, error) {
		return c.SetNX(t.Context(), k, fmt.Appendf(nil, "racer-%d", i), time.Minute)
	})
	winner := -1
	for i, r := range results {
		if r.(bool) {
			if winner >= 0 {
				t.Fatalf("SetNX: racers %d and %d both won", winner, i)
			}
			winner = i
		}
	}
	if winner < 0 {
		t.Fatal("SetNX: no racer won")
	}
	if got, want := string(cacheGet(t, c, k)), fmt.Sprintf("racer-%d", winner); got != want {
		t.Fatalf("stored value = %q, want the winner's %q", got, want)
	}
}

func testCacheGetDel(t *testing.T, c storage.Cache) {
	ctx := t.Context()
	k := cacheKey(cacheSiteA, "code")
	other := cacheKey(cacheSiteA, "other-code")
	cacheSet(t, c, k, []byte("grant-1"))
	cacheSet(t, c, other, []byte("grant-2"))

	got, err := c.GetDel(ctx, k)
	if err != nil || string(got) != "grant-1" {
		t.Fatalf("GetDel = %q, %v; want %q", got, err, "grant-1")
	}
	if _, err := c.GetDel(ctx, k); !errors.Is(err, storage.ErrCacheMiss) {
		t.Fatalf("second GetDel: err = %v, want ErrCacheMiss (a code is single use)", err)
	}
	if _, err := c.Get(ctx, k); !errors.Is(err, storage.ErrCacheMiss) {
		t.Fatalf("Get after GetDel: err = %v, want ErrCacheMiss", err)
	}
	if _, err := c.GetDel(ctx, cacheKey(cacheSiteA, "never-set")); !errors.Is(err, storage.ErrCacheMiss) {
		t.Fatalf("GetDel of an absent key: err = %v, want ErrCacheMiss", err)
	}
	if got := cacheGet(t, c, other); string(got) != "grant-2" {
		t.Fatalf("GetDel removed another key: Get = %q", got)
	}
}

// testCacheGetDelConcurrent is the authorization-code replay race (DESIGN
// §4): of many simultaneous redemptions, exactly one may get the code. It
// runs several rounds because a non-atomic get-then-delete loses only
// sometimes.
func testCacheGetDelConcurrent(t *testing.T, c storage.Cache) {
	const racers, rounds = 50, 10
	for round := range rounds {
		k := cacheKey(cacheSiteA, fmt.Sprintf("code-%d", round))
		cacheSet(t, c, k, []byte("the code"))
		winners := 0
		results := cacheRace(t, racers, func(int) (any, error) {
			v, err := c.GetDel(t.Context(), k)
			if errors.Is(err, storage.ErrCacheMiss) {
				return nil, nil // a loser: expected
			}
			return v, err
		})
		for _, r := range results {
			if r == nil {
				continue
			}
			winners++
			if v := r.([]byte); string(v) != "the code" {
				t.Fatalf("round %d: GetDel winner got %q", round, v)
			}
		}
		if winners != 1 {
			t.Fatalf("round %d: %d of %d concurrent GetDel calls got the value, want exactly 1", round, winners, racers)
		}
	}
}

func testCacheDelete(t *testing.T, c storage.Cache) {
	ctx := t.Context()
	a, b, keep := cacheKey(cacheSiteA, "a"), cacheKey(cacheSiteA, "b"), cacheKey(cacheSiteA, "keep")
	for _, k := range []string{a, b, keep} {
		cacheSet(t, c, k, []byte(k))
	}
	if err := c.Delete(ctx); err != nil {
		t.Fatalf("Delete of no keys: %v", err)
	}
	if err := c.Delete(ctx, a, cacheKey(cacheSiteA, "absent"), b); err != nil {
		t.Fatalf("Delete with an absent key among present ones: %v", err)
	}
	for _, k := range []string{a, b} {
		if _, err := c.Get(ctx, k); !errors.Is(err, storage.ErrCacheMiss) {
			t.Errorf("Get %s after Delete: err = %v, want ErrCacheMiss", k, err)
		}
	}
	if got := cacheGet(t, c, keep); string(got) != keep {
		t.Errorf("Delete removed a key it was not given: Get = %q", got)
	}
	if err := c.Delete(ctx, a); err != nil {
		t.Errorf("Delete of an already deleted key: %v", err)
	}
}

func testCacheIncr(t *testing.T, c storage.Cache) {
	ctx := t.Context()
	k, other := cacheKey(cacheSiteA, "failures"), cacheKey(cacheSiteA, "other-failures")
	for want := int64(1); want <= 5; want++ {
		n, err := c.Incr(ctx, k, time.Minute)
		if err != nil || n != want {
			t.Fatalf("Incr #%d = %d, %v; want %d", want, n, err, want)
		}
	}
	if n, err := c.Incr(ctx, other, time.Minute); err != nil || n != 1 {
		t.Fatalf("Incr of another key = %d, %v; want 1", n, err)
	}
	if err := c.Delete(ctx, k); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if n, err := c.Incr(ctx, k, time.Minute); err != nil || n != 1 {
		t.Fatalf("Incr after Delete = %d, %v; want 1 (a deleted counter starts again)", n, err)
	}
}

func testCacheIncrConcurrent(t *testing.T, c storage.Cache) {
	const racers = 50
	k := cacheKey(cacheSiteA, "hits")
	results := cacheRace(t, racers, func(int) (any, error) {
		return c.Incr(t.Context(), k, time.Minute)
	})
	seen := make(map[int64]bool, racers)
	for _, r := range results {
		n := r.(int64)
		if n < 1 || n > racers || seen[n] {
			t.Fatalf("concurrent Incr returned %d twice or outside 1..%d (all: %v)", n, racers, results)
		}
		seen[n] = true
	}
	if n, err := c.Incr(t.Context(), k, time.Minute); err != nil || n != racers+1 {
		t.Fatalf("Incr after %d concurrent increments = %d, %v; want %d", racers, n, err, racers+1)
	}
}

func testCachePublishSubscribe(t *testing.T, c storage.Cache) {
	ctx := t.Context()
	ch := cacheKey(cacheSiteA, "revoked")
	otherCh := cacheKey(cacheSiteA, "sessions")

	if err := c.Publish(ctx, ch, []byte("nobody listens")); err != nil {
		t.Fatalf("Publish without subscribers: %v", err)
	}

	sub1 := cacheSubscribe(ctx, t, c, ch)
	sub2 := cacheSubscribe(ctx, t, c, ch)
	subOther := cacheSubscribe(ctx, t, c, otherCh)

	msgs := []string{"jti-1", "jti-2", "grant-7"}
	for _, m := range msgs {
		if err := c.Publish(ctx, ch, []byte(m)); err != nil {
			t.Fatalf("Publish: %v", err)
		}
	}
	// The end marker proves that nothing else (no duplicate, no message
	// from before the subscription) arrived between.
	if err := c.Publish(ctx, ch, []byte("end")); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	if err := c.Publish(ctx, otherCh, []byte("other-end")); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	for name, sub := range map[string]<-chan []byte{"first": sub1, "second": sub2} {
		for _, want := range append(msgs, "end") {
			if got := cacheReceive(t, sub); string(got) != want {
				t.Errorf("%s subscriber got %q, want %q", name, got, want)
			}
		}
	}
	if got := cacheReceive(t, subOther); string(got) != "other-end" {
		t.Errorf("subscriber of another channel got %q, want only %q", got, "other-end")
	}
}

func testCacheSubscribeCancel(t *testing.T, c storage.Cache) {
	ctx := t.Context()
	ch := cacheKey(cacheSiteA, "events")
	subCtx, cancel := context.WithCancel(ctx)
	gone := cacheSubscribe(subCtx, t, c, ch)
	stays := cacheSubscribe(ctx, t, c, ch)

	if err := c.Publish(ctx, ch, []byte("before")); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	if got := cacheReceive(t, gone); string(got) != "before" {
		t.Fatalf("subscriber got %q, want %q", got, "before")
	}
	cancel()
	// The channel must close; nothing published after the cancel may come
	// out of it (a closed channel delivers nothing more).
	deadline := time.After(cacheMsgTimeout)
	for closed := false; !closed; {
		select {
		case m, ok := <-gone:
			if ok {
				t.Fatalf("canceled subscription delivered %q", m)
			}
			closed = true
		case <-deadline:
			t.Fatal("subscription channel still open after its context was canceled")
		}
	}
	if err := c.Publish(ctx, ch, []byte("after")); err != nil {
		t.Fatalf("Publish after a subscriber left: %v", err)
	}
	for _, want := range []string{"before", "after"} {
		if got := cacheReceive(t, stays); string(got) != want {
			t.Fatalf("remaining subscriber got %q, want %q", got, want)
		}
	}
}

func testCacheAllow(t *testing.T, c storage.Cache) {
	ctx := t.Context()
	limit := storage.Limit{Rate: 3, Period: time.Minute, Burst: 3} // one event every 20s
	k, other := cacheKey(cacheSiteA, "login:ip"), cacheKey(cacheSiteA, "login:other-ip")

	for i := range limit.Burst {
		ok, ra, err := c.Allow(ctx, k, limit)
		if err != nil || !ok {
			t.Fatalf("Allow #%d within the burst = %v, %s, %v; want allowed", i+1, ok, ra, err)
		}
	}
	ok, retry, err := c.Allow(ctx, k, limit)
	if err != nil {
		t.Fatalf("Allow past the burst: %v", err)
	}
	if ok {
		t.Fatalf("Allow #%d past a burst of %d was allowed", limit.Burst+1, limit.Burst)
	}
	// The next event is due one interval (Period/Rate = 20s) after the
	// first, less the moments this test has taken.
	if retry <= 15*time.Second || retry > 20*time.Second {
		t.Fatalf("retryAfter = %s, want just under 20s", retry)
	}
	// Refused attempts must not use up budget, or a client that retries
	// early would push its own next chance away.
	for range 3 {
		ok, again, err := c.Allow(ctx, k, limit)
		if err != nil || ok || again <= 0 || again > retry {
			t.Fatalf("repeated refused Allow = %v, %s, %v; want refused with retryAfter in (0, %s]", ok, again, err, retry)
		}
	}

	for i := range limit.Burst {
		if ok, _, err := c.Allow(ctx, other, limit); err != nil || !ok {
			t.Fatalf("Allow #%d on another key = %v, %v; want allowed (keys are independent)", i+1, ok, err)
		}
	}
	if ok, _, err := c.Allow(ctx, other, limit); err != nil || ok {
		t.Fatalf("Allow past the burst on another key = %v, %v; want refused", ok, err)
	}
}

func testCacheAllowRefill(t *testing.T, c storage.Cache) {
	ctx := t.Context()
	limit := storage.Limit{Rate: 20, Period: time.Second, Burst: 1} // one event every 50ms
	k := cacheKey(cacheSiteA, "token:client")

	if ok, _, err := c.Allow(ctx, k, limit); err != nil || !ok {
		t.Fatalf("first Allow = %v, %v; want allowed", ok, err)
	}
	ok, retry, err := c.Allow(ctx, k, limit)
	if err != nil || ok {
		t.Fatalf("second Allow at once = %v, %v; want refused", ok, err)
	}
	if retry <= 0 || retry > 50*time.Millisecond {
		t.Fatalf("retryAfter = %s, want in (0, 50ms]", retry)
	}
	// Waiting as long as we were told must be enough.
	time.Sleep(retry + 10*time.Millisecond)
	if ok, ra, err := c.Allow(ctx, k, limit); err != nil || !ok {
		t.Fatalf("Allow after waiting retryAfter = %v, %s, %v; want allowed", ok, ra, err)
	}
}

// AllowAtMost draws on the budget Allow draws on: it takes what is left of
// the burst when asked for more, then nothing until the rate refills it.
func testCacheAllowAtMost(t *testing.T, c storage.Cache) {
	ctx := t.Context()
	limit := storage.Limit{Rate: 10, Period: time.Minute, Burst: 10} // one event every 6s
	k := cacheKey(cacheSiteA, "token:lease")

	if got, _, err := c.AllowAtMost(ctx, k, limit, 4); err != nil || got != 4 {
		t.Fatalf("AllowAtMost(4) on a fresh key = %d, %v; want 4", got, err)
	}
	if ok, _, err := c.Allow(ctx, k, limit); err != nil || !ok {
		t.Fatalf("Allow after taking 4 of 10 = %v, %v; want allowed", ok, err)
	}
	if got, _, err := c.AllowAtMost(ctx, k, limit, 8); err != nil || got != 5 {
		t.Fatalf("AllowAtMost(8) with 5 left = %d, %v; want 5", got, err)
	}
	got, retry, err := c.AllowAtMost(ctx, k, limit, 3)
	if err != nil || got != 0 {
		t.Fatalf("AllowAtMost(3) with the burst spent = %d, %v; want 0", got, err)
	}
	if retry <= 3*time.Second || retry > 6*time.Second {
		t.Fatalf("retryAfter = %s, want just under one interval (6s)", retry)
	}
	if ok, _, err := c.Allow(ctx, k, limit); err != nil || ok {
		t.Fatalf("Allow with the burst spent by AllowAtMost = %v, %v; want refused", ok, err)
	}
	if _, _, err := c.AllowAtMost(ctx, k, limit, 0); err == nil {
		t.Fatal("AllowAtMost of 0 events: want an error")
	}
	if _, _, err := c.AllowAtMost(ctx, k, storage.Limit{}, 1); err == nil {
		t.Fatal("AllowAtMost with a zero limit: want an error")
	}
}

func testCacheAllowInvalidLimit(t *testing.T, c storage.Cache) {
	for _, tc := range []struct {
		name  string
		limit storage.Limit
	}{
		{"zero", storage.Limit{}},
		{"zero rate", storage.Limit{Rate: 0, Period: time.Second, Burst: 1}},
		{"negative rate", storage.Limit{Rate: -1, Period: time.Second, Burst: 1}},
		{"zero period", storage.Limit{Rate: 1, Period: 0, Burst: 1}},
		{"zero burst", storage.Limit{Rate: 1, Period: time.Second, Burst: 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if ok, _, err := c.Allow(t.Context(), cacheKey(cacheSiteA, "invalid"), tc.limit); err == nil || ok {
				t.Fatalf("Allow with %+v = %v, %v; want an error", tc.limit, ok, err)
			}
		})
	}
}

// testCacheSiteIsolation writes the same kind and id for two sites through
// every operation and checks that neither site sees the other's state.
func testCacheSiteIsolation(t *testing.T, c storage.Cache) {
	ctx := t.Context()
	a, b := cacheKey(cacheSiteA, "same-id"), cacheKey(cacheSiteB, "same-id")
	if a == b {
		t.Fatalf("storage.CacheKey gives both sites the key %q", a)
	}

	cacheSet(t, c, a, []byte("site A"))
	if _, err := c.Get(ctx, b); !errors.Is(err, storage.ErrCacheMiss) {
		t.Fatalf("site B sees site A's key: err = %v", err)
	}
	if ok, err := c.SetNX(ctx, b, []byte("site B"), time.Minute); err != nil || !ok {
		t.Fatalf("SetNX for site B while site A holds the same id = %v, %v; want true", ok, err)
	}
	if got, err := c.GetMulti(ctx, a, b); err != nil || len(got) != 2 || string(got[0]) != "site A" || string(got[1]) != "site B" {
		t.Fatalf("GetMulti(A, B) = %q, %v", got, err)
	}
	if got, err := c.GetDel(ctx, a); err != nil || string(got) != "site A" {
		t.Fatalf("GetDel for site A = %q, %v", got, err)
	}
	if got := cacheGet(t, c, b); string(got) != "site B" {
		t.Fatalf("GetDel of site A's key touched site B's: Get = %q", got)
	}
	cacheSet(t, c, a, []byte("site A again"))
	if err := c.Delete(ctx, b); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if got := cacheGet(t, c, a); string(got) != "site A again" {
		t.Fatalf("Delete of site B's key touched site A's: Get = %q", got)
	}

	ca, cb := storage.CacheKey(cacheSiteA, "count", "x"), storage.CacheKey(cacheSiteB, "count", "x")
	for range 3 {
		if _, err := c.Incr(ctx, ca, time.Minute); err != nil {
			t.Fatalf("Incr: %v", err)
		}
	}
	if n, err := c.Incr(ctx, cb, time.Minute); err != nil || n != 1 {
		t.Fatalf("site B's first Incr after three of site A's = %d, %v; want 1", n, err)
	}

	limit := storage.Limit{Rate: 1, Period: time.Hour, Burst: 1}
	ra, rb := storage.CacheKey(cacheSiteA, "rate", "x"), storage.CacheKey(cacheSiteB, "rate", "x")
	if ok, _, err := c.Allow(ctx, ra, limit); err != nil || !ok {
		t.Fatalf("site A's first Allow = %v, %v", ok, err)
	}
	if ok, _, err := c.Allow(ctx, ra, limit); err != nil || ok {
		t.Fatalf("site A's second Allow = %v, %v; want refused", ok, err)
	}
	if ok, _, err := c.Allow(ctx, rb, limit); err != nil || !ok {
		t.Fatalf("site B's first Allow after site A used its limit = %v, %v; want allowed", ok, err)
	}

	chA, chB := storage.CacheKey(cacheSiteA, "chan", "x"), storage.CacheKey(cacheSiteB, "chan", "x")
	subB := cacheSubscribe(ctx, t, c, chB)
	if err := c.Publish(ctx, chA, []byte("for site A")); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	if err := c.Publish(ctx, chB, []byte("for site B")); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	if got := cacheReceive(t, subB); string(got) != "for site B" {
		t.Fatalf("site B's subscriber got %q, want only site B's message", got)
	}
}

func testCacheBinaryValues(t *testing.T, c storage.Cache) {
	ctx := t.Context()
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	large := make([]byte, 64<<10)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range large {
		large[i] = byte(rng.Uint32())
	}

	for _, tc := range []struct {
		name  string
		id    string
		value []byte
	}{
		{"every byte", "bytes", all},
		{"NUL only", "nul", []byte{0}},
		{"protocol lookalike", "resp", []byte("*1\r\n$4\r\nPING\r\n")},
		{"invalid UTF-8", "utf8", []byte{0xff, 0xfe, 0xc3, 0x28}},
		{"64 KiB", "large", large},
		{"binary key", "k\x00\r\n é {x}", []byte("v")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := cacheKey(cacheSiteA, tc.id)
			cacheSet(t, c, k, tc.value)
			if got := cacheGet(t, c, k); !bytes.Equal(got, tc.value) {
				t.Fatalf("Get returned %d bytes that differ from the %d stored", len(got), len(tc.value))
			}
			if got, err := c.GetMulti(ctx, k); err != nil || len(got) != 1 || !bytes.Equal(got[0], tc.value) {
				t.Fatalf("GetMulti does not return the stored bytes (err %v)", err)
			}
			if got, err := c.GetDel(ctx, k); err != nil || !bytes.Equal(got, tc.value) {
				t.Fatalf("GetDel does not return the stored bytes (err %v)", err)
			}
			if ok, err := c.SetNX(ctx, k, tc.value, time.Minute); err != nil || !ok {
				t.Fatalf("SetNX = %v, %v", ok, err)
			}
			if got := cacheGet(t, c, k); !bytes.Equal(got, tc.value) {
				t.Fatal("Get after SetNX does not return the stored bytes")
			}

			ch := cacheKey(cacheSiteA, "chan-"+tc.id)
			sub := cacheSubscribe(ctx, t, c, ch)
			if err := c.Publish(ctx, ch, tc.value); err != nil {
				t.Fatalf("Publish: %v", err)
			}
			if got := cacheReceive(t, sub); !bytes.Equal(got, tc.value) {
				t.Fatalf("subscriber got %d bytes that differ from the %d published", len(got), len(tc.value))
			}
		})
	}
}

func testCacheCanceledContext(t *testing.T, c storage.Cache) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	k := cacheKey(cacheSiteA, "canceled")
	if err := c.Set(ctx, k, []byte("v"), time.Minute); !errors.Is(err, context.Canceled) {
		t.Errorf("Set with a canceled context: err = %v, want context.Canceled", err)
	}
	if _, err := c.Get(ctx, k); !errors.Is(err, context.Canceled) {
		t.Errorf("Get with a canceled context: err = %v, want context.Canceled", err)
	}
	if _, err := c.Subscribe(ctx, k); !errors.Is(err, context.Canceled) {
		t.Errorf("Subscribe with a canceled context: err = %v, want context.Canceled", err)
	}
	if _, err := c.Get(t.Context(), k); !errors.Is(err, storage.ErrCacheMiss) {
		t.Errorf("a Set with a canceled context stored the key: err = %v", err)
	}
}

func testCacheClose(t *testing.T, c storage.Cache) {
	ctx := t.Context()
	if err := c.Ping(ctx); err != nil {
		t.Fatalf("Ping of an open cache: %v", err)
	}
	sub := cacheSubscribe(ctx, t, c, cacheKey(cacheSiteA, "close"))
	// A Close that waits on a subscription it never ends would hang the
	// process at shutdown; fail instead of hanging the test binary.
	closed := make(chan error, 1)
	go func() { closed <- c.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatalf("Close: %v", err)
		}
	case <-time.After(cacheMsgTimeout):
		t.Fatal("Close with an open subscription did not return")
	}
	select {
	case _, ok := <-sub:
		if ok {
			t.Fatal("subscription delivered a message after Close")
		}
	case <-time.After(cacheMsgTimeout):
		t.Fatal("subscription channel still open after Close")
	}
	if err := c.Ping(ctx); !errors.Is(err, storage.ErrUnavailable) {
		t.Errorf("Ping after Close: err = %v, want ErrUnavailable", err)
	}
	if _, err := c.Get(ctx, cacheKey(cacheSiteA, "k")); !errors.Is(err, storage.ErrUnavailable) {
		t.Errorf("Get after Close: err = %v, want ErrUnavailable (not a miss)", err)
	}
}

func cacheSet(t *testing.T, c storage.Cache, k string, v []byte) {
	t.Helper()
	if err := c.Set(t.Context(), k, v, time.Minute); err != nil {
		t.Fatalf("Set %q: %v", k, err)
	}
}

func cacheGet(t *testing.T, c storage.Cache, k string) []byte {
	t.Helper()
	v, err := c.Get(t.Context(), k)
	if err != nil {
		t.Fatalf("Get %q: %v", k, err)
	}
	return v
}

func cacheSubscribe(ctx context.Context, t *testing.T, c storage.Cache, ch string) <-chan []byte {
	t.Helper()
	sub, err := c.Subscribe(ctx, ch)
	if err != nil {
		t.Fatalf("Subscribe %q: %v", ch, err)
	}
	return sub
}

// cacheReceive returns the next message of sub, failing the test if none comes
// or the channel closes.
func cacheReceive(t *testing.T, sub <-chan []byte) []byte {
	t.Helper()
	select {
	case m, ok := <-sub:
		if !ok {
			t.Fatal("subscription channel closed while a message was expected")
		}
		return m
	case <-time.After(cacheMsgTimeout):
		t.Fatal("no message within", cacheMsgTimeout)
		return nil
	}
}

// cacheRace runs f in n goroutines released at the same instant and returns
// their results by goroutine index; any error fails the test.
func cacheRace(t *testing.T, n int, f func(i int) (any, error)) []any {
	t.Helper()
	var (
		start   = make(chan struct{})
		wg      sync.WaitGroup
		results = make([]any, n)
		errs    = make([]error, n)
	)
	for i := range n {
		wg.Go(func() {
			<-start
			results[i], errs[i] = f(i)
		})
	}
	close(start)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("concurrent calls failed: %v", err)
	}
	return results
}

func cacheShow(b []byte) string {
	if b == nil {
		return "nil (miss)"
	}
	return fmt.Sprintf("%q", b)
}

func cacheSleepUntil(at time.Time) {
	time.Sleep(time.Until(at))
}
