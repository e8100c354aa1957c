package cache

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/storage/storagetest"
)

// A stalled Redis costs the first few callers a timeout each; then the
// breaker opens and every call fails at once as unavailable (the callers
// go to the database), until a probe finds Redis back and calls reach it
// again.
func TestRedisBreakerFailsFastAndRecovers(t *testing.T) {
	url := storagetest.RedisURL(t)
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	p := newFreezeProxy(t, opts.Addr)
	r, err := NewRedis(t.Context(), "redis://"+p.addr()+"/"+strconv.Itoa(opts.DB), &RedisOptions{
		Prefix: randomPrefix(t), ReadTimeout: 100 * time.Millisecond, OpTimeout: 100 * time.Millisecond,
		BreakerMinOpen: 50 * time.Millisecond, BreakerMaxOpen: 200 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx := t.Context()
	if err := r.Set(ctx, "k", []byte("v"), time.Minute); err != nil {
		t.Fatal(err)
	}
	if st := r.Breaker(); st.Open || st.Opens != 0 {
		t.Fatalf("breaker before any failure: %+v", st)
	}

	p.freeze()
	for i := range DefaultBreakerThreshold {
		if _, err := r.Get(ctx, "k"); !errors.Is(err, storage.ErrUnavailable) {
			t.Fatalf("Get %d on a stalled Redis: %v; want unavailable", i, err)
		}
	}
	if st := r.Breaker(); !st.Open || st.Opens != 1 {
		t.Fatalf("breaker after %d timeouts: %+v; want open once", DefaultBreakerThreshold, st)
	}
	calls := map[string]func() error{
		"Get":      func() error { _, err := r.Get(ctx, "k"); return err },
		"GetMulti": func() error { _, err := r.GetMulti(ctx, "k", "j"); return err },
		"HashGet":  func() error { _, err := r.HashGet(ctx, "h", "v"); return err },
		"Set":      func() error { return r.Set(ctx, "k", []byte("w"), time.Minute) },
		"GetDel":   func() error { _, err := r.GetDel(ctx, "k"); return err },
		"Incr":     func() error { _, err := r.Incr(ctx, "n", time.Minute); return err },
		"Allow": func() error {
			_, _, err := r.Allow(ctx, "l", storage.Limit{Rate: 1, Period: time.Second, Burst: 1})
			return err
		},
		"HashReplace": func() error { _, err := r.HashReplace(ctx, "h", 1, nil, time.Minute); return err },
		"Publish":     func() error { return r.Publish(ctx, "c", []byte("m")) },
		"Subscribe":   func() error { _, err := r.Subscribe(ctx, "c"); return err },
		"Ping":        func() error { return r.Ping(ctx) },
	}
	for name, call := range calls {
		// The breaker's own answer, not the stalled server's timeout.
		if err := call(); !errors.Is(err, storage.ErrUnavailable) || !errors.Is(err, errCircuitOpen) || errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s with the breaker open: %v; want the breaker's unavailable at once", name, err)
		}
	}

	p.thaw()
	deadline := time.Now().Add(5 * time.Second)
	for r.Breaker().Open {
		if time.Now().After(deadline) {
			t.Fatal("the breaker stayed open after Redis answered again")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if v, err := r.Get(ctx, "k"); err != nil || string(v) != "v" {
		t.Fatalf("Get after recovery = %q, %v", v, err)
	}
}

// Errors Redis answers (a wrong type, a full Redis) say nothing about
// reachability and never open the breaker; a success between failures
// resets the count.
func TestRedisBreakerCountsOnlyOutages(t *testing.T) {
	url := storagetest.RedisURL(t)
	r := newTestRedis(t, url, adminClient(t, url))
	ctx := t.Context()
	if err := r.Set(ctx, "plain", []byte("v"), time.Minute); err != nil {
		t.Fatal(err)
	}
	for range 10 * DefaultBreakerThreshold {
		if _, err := r.HashGet(ctx, "plain", "f"); err == nil {
			t.Fatal("HashGet of a plain value succeeded")
		}
		if _, err := r.Get(ctx, "absent"); !errors.Is(err, storage.ErrCacheMiss) {
			t.Fatal(err)
		}
	}
	if st := r.Breaker(); st.Open || st.Opens != 0 {
		t.Fatalf("breaker after wrong-type errors and misses: %+v; want closed", st)
	}

	b := newBreaker(3, time.Hour, time.Hour, func(context.Context) error { return nil }, make(chan struct{}))
	for range 10 {
		b.record(true)
		b.record(true)
		b.record(false)
	}
	if b.state().Open {
		t.Fatal("two failures between successes opened the breaker")
	}
	if !countsAsOutage(context.DeadlineExceeded) || countsAsOutage(context.Canceled) ||
		countsAsOutage(redisErr("OOM command not allowed when used memory > 'maxmemory'.")) || !countsAsOutage(redisErr("LOADING Redis is loading the dataset in memory")) {
		t.Fatal("countsAsOutage sorts errors wrongly")
	}
}
