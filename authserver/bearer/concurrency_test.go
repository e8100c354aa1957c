package bearer

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestVerifyConcurrently verifies the same and different tokens from many
// goroutines (run it with -race) while a grant is revoked and the cache
// loses the sites' revocations, with a verified-token cache small enough to churn.
// Every answer must be right: valid tokens pass, refused ones never do, and
// once RevokeGrant has returned no check that starts after it lets the
// grant's tokens through.
func TestVerifyConcurrently(t *testing.T) {
	eachBackendRealClock(t, func(o *Options) { o.CacheEntries = 8 }, func(t *testing.T, e *env) {
		type tokenCase struct {
			raw    string
			site   int // 0: A, 1: B
			accept bool
		}
		var cases []tokenCase
		for range 6 {
			raw, _ := e.token(t, e.a)
			cases = append(cases, tokenCase{raw, 0, true})
		}
		for range 3 {
			raw, _ := e.token(t, e.b)
			cases = append(cases, tokenCase{raw, 1, true})
			cases = append(cases, tokenCase{raw, 0, false}) // B's token at A
		}
		for range 2 {
			raw, c := e.token(t, e.a)
			if err := e.v.RevokeToken(t.Context(), e.a.ID, c.JTI, time.Unix(c.Expiry, 0), time.Now()); err != nil {
				t.Fatal(err)
			}
			cases = append(cases, tokenCase{raw, 0, false})
		}
		target := e.grant(t, e.a)
		targetToks := []string{e.mint(t, e.a, e.claims(e.a, target)), e.mint(t, e.a, e.claims(e.a, target))}

		const workers, rounds = 16, 60
		var (
			revoking atomic.Bool // set before RevokeGrant starts
			revoked  atomic.Bool // set after it returned
			failures atomic.Int64
			checks   atomic.Int64 // rounds done, by all workers
			wg       sync.WaitGroup
		)
		fail := func(format string, args ...any) {
			if failures.Add(1) <= 5 {
				t.Errorf(format, args...)
			}
		}
		for w := range workers {
			wg.Go(func() {
				for i := range rounds {
					c := cases[(w*7+i)%len(cases)]
					site := e.a
					if c.site == 1 {
						site = e.b
					}
					_, err := e.v.Verify(t.Context(), site, c.raw)
					if c.accept && err != nil {
						fail("worker %d round %d: valid token refused: %v", w, i, err)
					}
					if !c.accept && err == nil {
						fail("worker %d round %d: token accepted that must be refused", w, i)
					}
					raw := targetToks[i%2]
					after := revoked.Load()
					_, err = e.v.Verify(t.Context(), e.a, raw)
					if after && err == nil {
						fail("worker %d round %d: token of a revoked grant accepted after RevokeGrant returned", w, i)
					}
					if err != nil && !revoking.Load() {
						fail("worker %d round %d: token of a live grant refused: %v", w, i, err)
					}
					checks.Add(1)
				}
			})
		}
		wg.Go(func() {
			for i := range 5 {
				// Mid-traffic, paced by the workers' progress rather than
				// by the clock.
				for checks.Load() < int64(i+1)*workers*rounds/8 {
					runtime.Gosched()
				}
				// A cache that loses the sites' revocations mid-traffic.
				if err := e.cache.Cache.Delete(t.Context(), stateKey(e.a.ID), stateKey(e.b.ID)); err != nil {
					fail("deleting the revocation hashes: %v", err)
				}
				if i == 2 {
					revoking.Store(true)
					if err := e.v.RevokeGrant(t.Context(), e.a.ID, target, time.Now()); err != nil {
						fail("RevokeGrant: %v", err)
					}
					revoked.Store(true)
				}
			}
		})
		wg.Wait()
		if n := failures.Load(); n > 0 {
			t.Fatalf("%d wrong answers", n)
		}
		if !revoked.Load() {
			t.Fatal("the grant was never revoked")
		}
		for _, raw := range targetToks {
			wantStatus(t, verifyErr(t, e, e.a, raw), 401, "revoked grant at the end")
		}
	})
}
