package mfa

import (
	"context"
	"crypto/rand"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/storage/cache"
	"github.com/lectern/lectern/storage/storagetest"
)

// eachCache runs f with the embedded default's in-memory cache and with
// Redis (the shared test server, under a prefix of its own).
func eachCache(t *testing.T, f func(t *testing.T, c storage.Cache)) {
	t.Run("memory", func(t *testing.T) {
		c := cache.NewMemory(nil)
		t.Cleanup(func() { _ = c.Close() })
		f(t, c)
	})
	t.Run("redis", func(t *testing.T) {
		url := storagetest.RedisURL(t)
		c, err := cache.NewRedis(t.Context(), url, &cache.RedisOptions{Prefix: "lectern-test:mfa:" + rand.Text() + ":"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		f(t, c)
	})
}

// withApp is a store with an authenticator app for a new account.
func withApp(t *testing.T) (*memStore, string, string) {
	t.Helper()
	e, err := NewEnrolment("Demo Academy", "ada@example.test")
	if err != nil {
		t.Fatal(err)
	}
	u := &storage.User{ID: "usr_" + rand.Text(), Email: "ada@example.test"}
	s := newMemStore(u)
	s.totp[u.ID] = &storage.TOTP{UserID: u.ID, Secret: e.Secret}
	return s, u.ID, e.Secret
}

// wrongCode is a 6-digit code that matches no step within the skew.
func wrongCode(t *testing.T, secret string, now time.Time) string {
	t.Helper()
	for _, c := range []string{"000000", "111111", "222222", "333333", "444444"} {
		if _, ok := MatchTOTP(secret, c, now); !ok {
			return c
		}
	}
	t.Fatal("no wrong code found")
	return ""
}

// Wrong codes sent at the same time are counted before they are checked
// (audit P, finding 4): of 40 parallel attempts exactly MaxFailures are
// checked, the rest refused with ErrThrottled, on both caches. The store
// holds every check until all 40 arrived (or a moment passed), so a check
// that only counted afterwards would let all 40 through.
func TestWrongCodesInParallelAreLimited(t *testing.T) {
	const n = 40
	eachCache(t, func(t *testing.T, c storage.Cache) {
		store, user, secret := withApp(t)
		var mu sync.Mutex
		arrived := 0
		all := make(chan struct{})
		store.totpOf = func() {
			mu.Lock()
			arrived++
			if arrived == n {
				close(all)
			}
			mu.Unlock()
			select {
			case <-all:
			case <-time.After(300 * time.Millisecond):
			}
		}
		now := time.Now()
		checker := &Checker{Store: store, Cache: c, Now: func() time.Time { return now }}
		t.Cleanup(func() { _ = c.Delete(context.Background(), attemptsKey(user), rightKey(user)) })
		code := wrongCode(t, secret, now)
		var wg sync.WaitGroup
		var checked, throttled int
		for range n {
			wg.Go(func() {
				ok, err := checker.Check(context.Background(), user, code)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case errors.Is(err, ErrThrottled):
					throttled++
				case err != nil || ok:
					t.Errorf("a wrong code: %v, %v", ok, err)
				default:
					checked++
				}
			})
		}
		wg.Wait()
		if checked != MaxFailures || throttled != n-MaxFailures {
			t.Errorf("%d parallel wrong codes: %d checked, %d throttled; want %d checked", n, checked, throttled, MaxFailures)
		}
		// The right code is refused too until the window ends.
		right, _ := totp.GenerateCode(secret, now)
		if ok, err := checker.Check(context.Background(), user, right); ok || !errors.Is(err, ErrThrottled) {
			t.Errorf("the right code after the limit: %v, %v; want ErrThrottled", ok, err)
		}
	})
}

// The limit is on wrong codes: a right one (at sign-in or confirming a new
// app) gives its attempt back, a wrong one never does.
func TestRightCodesDoNotCount(t *testing.T) {
	eachCache(t, func(t *testing.T, c storage.Cache) {
		ctx := context.Background()
		store, user, secret := withApp(t)
		now := time.Now()
		checker := &Checker{Store: store, Cache: c, Now: func() time.Time { return now }}
		t.Cleanup(func() { _ = c.Delete(ctx, attemptsKey(user), rightKey(user)) })
		wrong := wrongCode(t, secret, now)
		for i := range MaxFailures - 1 {
			if ok, err := checker.Check(ctx, user, wrong); ok || err != nil {
				t.Fatalf("wrong code %d: %v, %v", i+1, ok, err)
			}
		}
		// Three right codes in between: each step once, and a new app's
		// first code.
		for _, at := range []time.Time{now.Add(-30 * time.Second), now} {
			code, _ := totp.GenerateCode(secret, at)
			if ok, err := checker.Check(ctx, user, code); !ok || err != nil {
				t.Fatalf("a right code after %d wrong ones: %v, %v", MaxFailures-1, ok, err)
			}
		}
		e, _ := NewEnrolment("Demo Academy", "ada@example.test")
		first, _ := totp.GenerateCode(e.Secret, now)
		if _, ok, err := checker.CheckNew(ctx, user, e.Secret, first); !ok || err != nil {
			t.Fatalf("a new app's right first code: %v, %v", ok, err)
		}
		// The fifth wrong code is still checked; the sixth is not.
		if ok, err := checker.Check(ctx, user, wrong); ok || err != nil {
			t.Fatalf("wrong code %d: %v, %v; want it checked", MaxFailures, ok, err)
		}
		if _, _, err := checker.CheckNew(ctx, user, e.Secret, wrong); !errors.Is(err, ErrThrottled) {
			t.Fatalf("wrong code %d: %v; want ErrThrottled", MaxFailures+1, err)
		}
		next, _ := totp.GenerateCode(secret, now.Add(30*time.Second))
		if ok, err := checker.Check(ctx, user, next); ok || !errors.Is(err, ErrThrottled) {
			t.Errorf("a right code after %d wrong ones: %v, %v; want ErrThrottled", MaxFailures, ok, err)
		}
	})
}

// A code typed as apps show it, "123 456", is the code (audit P,
// finding 6), and no wrong code is counted for it.
func TestSpacedTOTPCode(t *testing.T) {
	ctx := context.Background()
	c := cache.NewMemory(nil)
	defer c.Close()
	store, user, secret := withApp(t)
	now := time.Now()
	checker := &Checker{Store: store, Cache: c, Now: func() time.Time { return now }}
	for i, typed := range []func(string) string{
		func(s string) string { return s[:3] + " " + s[3:] },
		func(s string) string { return " " + s[:3] + "-" + s[3:] + " " },
		func(s string) string { return s[:2] + " " + s[2:4] + " " + s[4:] },
	} {
		code, _ := totp.GenerateCode(secret, now.Add(time.Duration(i-1)*30*time.Second))
		if _, ok := MatchTOTP(secret, typed(code), now); !ok {
			t.Errorf("MatchTOTP(%q) refused", typed(code))
		}
		if ok, err := checker.Check(ctx, user, typed(code)); !ok || err != nil {
			t.Errorf("Check(%q) = %v, %v; want accepted", typed(code), ok, err)
		}
	}
	if raw, err := c.Get(ctx, attemptsKey(user)); err != nil || string(raw) != "3" {
		t.Errorf("attempts %q, %v; want 3", raw, err)
	}
	if raw, err := c.Get(ctx, rightKey(user)); err != nil || string(raw) != "3" {
		t.Errorf("right codes %q, %v; want 3 (nothing counted as wrong)", raw, err)
	}
	for _, bad := range []string{"123 45", "1234 567", "12a 456", "123_456"} {
		if _, ok := TOTPCode(bad); ok {
			t.Errorf("TOTPCode(%q) accepted", bad)
		}
	}
}
