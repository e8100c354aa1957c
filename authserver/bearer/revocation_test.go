package bearer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/storage/sqlstore"
	"github.com/lectern/lectern/storage/sqlstore/sqltest"
	"github.com/lectern/lectern/tenant"
)

func verifyErr(t *testing.T, e *env, site *tenant.Site, raw string) error {
	t.Helper()
	_, err := e.v.Verify(t.Context(), site, raw)
	return err
}

func TestRevokedToken(t *testing.T) {
	eachBackend(t, nil, func(t *testing.T, e *env) {
		g := e.grant(t, e.a)
		c := e.claims(e.a, g)
		raw := e.mint(t, e.a, c)
		sibling := e.mint(t, e.a, e.claims(e.a, g))
		// Site B holds a token with the same jti: revocation is per site.
		cB := e.claims(e.b, e.grant(t, e.b))
		cB.JTI = c.JTI
		rawB := e.mint(t, e.b, cB)
		for _, r := range []string{raw, sibling} {
			wantStatus(t, verifyErr(t, e, e.a, r), 0, "before revocation")
		}

		if err := e.v.RevokeToken(t.Context(), e.a.ID, c.JTI, time.Unix(c.Expiry, 0), time.Now()); err != nil {
			t.Fatal(err)
		}
		got := wantStatus(t, verifyErr(t, e, e.a, raw), 401, "revoked token")
		if got.Description != descRevoked {
			t.Errorf("description %q, want %q", got.Description, descRevoked)
		}
		wantStatus(t, verifyErr(t, e, e.a, sibling), 0, "another token of the same grant")
		wantStatus(t, verifyErr(t, e, e.b, rawB), 0, "site B's token with the same jti")
		if revoked, err := e.store.TokenRevoked(t.Context(), e.a.ID, c.JTI); err != nil || !revoked {
			t.Errorf("database: TokenRevoked = %v, %v; want the revocation recorded", revoked, err)
		}
		// Revoking again is harmless.
		if err := e.v.RevokeToken(t.Context(), e.a.ID, c.JTI, time.Unix(c.Expiry, 0), time.Now()); err != nil {
			t.Errorf("second RevokeToken: %v", err)
		}
	})
}

func TestRevokedGrant(t *testing.T) {
	eachBackendRealClock(t, nil, func(t *testing.T, e *env) {
		t.Run("RevokeGrant", func(t *testing.T) {
			g := e.grant(t, e.a)
			raw1, raw2 := e.mint(t, e.a, e.claims(e.a, g)), e.mint(t, e.a, e.claims(e.a, g))
			other, _ := e.token(t, e.a)
			wantStatus(t, verifyErr(t, e, e.a, raw1), 0, "before revocation")
			if err := e.v.RevokeGrant(t.Context(), e.a.ID, g, time.Now()); err != nil {
				t.Fatal(err)
			}
			wantStatus(t, verifyErr(t, e, e.a, raw1), 401, "token of a revoked grant (verified before)")
			wantStatus(t, verifyErr(t, e, e.a, raw2), 401, "token of a revoked grant (never verified)")
			wantStatus(t, verifyErr(t, e, e.a, other), 0, "token of another grant")
			if gr, err := e.store.GrantByID(t.Context(), e.a.ID, g); err != nil || gr.RevokedAt == nil {
				t.Errorf("database: grant = %+v, %v; want it revoked", gr, err)
			}
		})
		t.Run("MarkGrantRevoked after the store revoked it", func(t *testing.T) {
			g := e.grant(t, e.a)
			raw := e.mint(t, e.a, e.claims(e.a, g))
			wantStatus(t, verifyErr(t, e, e.a, raw), 0, "before revocation")
			// Reuse detection revokes in the database itself...
			if err := e.store.RevokeGrant(t.Context(), e.a.ID, g, time.Now()); err != nil {
				t.Fatal(err)
			}
			// ...and the cache, whose marker is set, does not know yet.
			wantStatus(t, verifyErr(t, e, e.a, raw), 0, "revoked in the database only, marker set (the window MarkGrantRevoked closes)")
			if err := e.v.MarkGrantRevoked(t.Context(), e.a.ID, g); err != nil {
				t.Fatal(err)
			}
			wantStatus(t, verifyErr(t, e, e.a, raw), 401, "after MarkGrantRevoked")
		})
		t.Run("unknown grant", func(t *testing.T) {
			err := e.v.RevokeGrant(t.Context(), e.a.ID, "grt_nonexistent", time.Now())
			if !errors.Is(err, storage.ErrNotFound) {
				t.Errorf("RevokeGrant of an unknown grant: %v, want storage.ErrNotFound", err)
			}
		})
		t.Run("other site's grant", func(t *testing.T) {
			g := e.grant(t, e.b)
			err := e.v.RevokeGrant(t.Context(), e.a.ID, g, time.Now())
			if !errors.Is(err, storage.ErrNotFound) {
				t.Errorf("RevokeGrant of site B's grant at site A: %v, want storage.ErrNotFound", err)
			}
		})
	})
}

// TestVerifiedTokenCacheDoesNotHideRevocation: the verified-token cache
// skips the signature, never the revocation check.
func TestVerifiedTokenCacheDoesNotHideRevocation(t *testing.T) {
	eachBackend(t, nil, func(t *testing.T, e *env) {
		raw1, c1 := e.token(t, e.a)
		raw2, c2 := e.token(t, e.a)
		for range 3 {
			wantStatus(t, verifyErr(t, e, e.a, raw1), 0, "before revocation")
			wantStatus(t, verifyErr(t, e, e.a, raw2), 0, "before revocation")
		}
		if e.v.tokens.len() != 2 {
			t.Fatalf("cache holds %d entries, want both tokens", e.v.tokens.len())
		}
		if err := e.v.RevokeToken(t.Context(), e.a.ID, c1.JTI, time.Unix(c1.Expiry, 0), time.Now()); err != nil {
			t.Fatal(err)
		}
		if err := e.v.RevokeGrant(t.Context(), e.a.ID, c2.GrantID, time.Now()); err != nil {
			t.Fatal(err)
		}
		wantStatus(t, verifyErr(t, e, e.a, raw1), 401, "cached token, jti revoked")
		wantStatus(t, verifyErr(t, e, e.a, raw2), 401, "cached token, grant revoked")
	})
}

// TestRefillAfterCacheLoss: a cache that lost everything (flush, restart)
// has lost its marker; the next check refills it from the database.
func TestRefillAfterCacheLoss(t *testing.T) {
	eachBackend(t, nil, func(t *testing.T, e *env) {
		rawJTI, cJTI := e.token(t, e.a)
		rawGrant, cGrant := e.token(t, e.a)
		// Revoked in the database only, by another process: only a refill
		// can know.
		rawDBOnly, cDBOnly := e.token(t, e.a)
		fresh, _ := e.token(t, e.a)
		for _, r := range []string{rawJTI, rawGrant, rawDBOnly, fresh} {
			wantStatus(t, verifyErr(t, e, e.a, r), 0, "before revocation")
		}
		now := time.Now()
		if err := e.v.RevokeToken(t.Context(), e.a.ID, cJTI.JTI, time.Unix(cJTI.Expiry, 0), now); err != nil {
			t.Fatal(err)
		}
		if err := e.v.RevokeGrant(t.Context(), e.a.ID, cGrant.GrantID, now); err != nil {
			t.Fatal(err)
		}
		if err := e.store.RevokeGrant(t.Context(), e.a.ID, cDBOnly.GrantID, now); err != nil {
			t.Fatal(err)
		}

		e.cache.flush(t)
		if e.cache.has(t, markerKey(e.a.ID)) || e.cache.has(t, grantKey(e.a.ID, cGrant.GrantID)) {
			t.Fatal("flush left keys behind")
		}
		e.cache.forgetTTLs()
		time.Sleep(10 * time.Second)

		// The bubble's clock stands still but for the Redis client's
		// batching timers, which may move it by microseconds while the
		// refill writes: the refill happened between before and after.
		before := time.Now()
		wantStatus(t, verifyErr(t, e, e.a, fresh), 0, "a valid token after the flush")
		after := time.Now()
		if !e.cache.has(t, markerKey(e.a.ID)) {
			t.Fatal("the check did not set the marker again")
		}
		if d, _ := e.cache.ttl(markerKey(e.a.ID)); d != RefillInterval {
			t.Errorf("marker TTL %v, want %v", d, RefillInterval)
		}
		// The copies are back, each with what remains of its lifetime.
		jtiEnd := time.Unix(cJTI.Expiry, 0).Add(DefaultSkew)
		for _, tc := range []struct {
			key      string
			min, max time.Duration
		}{
			{jtiKey(e.a.ID, cJTI.JTI), jtiEnd.Sub(after), jtiEnd.Sub(before)},
			{grantKey(e.a.ID, cGrant.GrantID), AccessTokenLifetime + DefaultSkew - 10*time.Second - after.Sub(before), AccessTokenLifetime + DefaultSkew - 10*time.Second},
			{grantKey(e.a.ID, cDBOnly.GrantID), AccessTokenLifetime + DefaultSkew - 10*time.Second - after.Sub(before), AccessTokenLifetime + DefaultSkew - 10*time.Second},
		} {
			if !e.cache.has(t, tc.key) {
				t.Errorf("refill did not copy %s", tc.key)
				continue
			}
			if d, _ := e.cache.ttl(tc.key); d < tc.min || d > tc.max {
				t.Errorf("refilled %s with TTL %v, want %v (within %v)", tc.key, d, tc.max, tc.max-tc.min)
			}
		}
		wantStatus(t, verifyErr(t, e, e.a, rawJTI), 401, "revoked jti after the flush")
		wantStatus(t, verifyErr(t, e, e.a, rawGrant), 401, "revoked grant after the flush")
		wantStatus(t, verifyErr(t, e, e.a, rawDBOnly), 401, "grant revoked in the database only")

		// The first check after a flush answers from the refill itself.
		e.cache.flush(t)
		wantStatus(t, verifyErr(t, e, e.a, rawDBOnly), 401, "first check after a second flush")
	})
}

// TestRefillWindows: the refill copies only what can still matter, and
// what still matters includes tokens within the skew of their exp.
func TestRefillWindows(t *testing.T) {
	eachBackend(t, nil, func(t *testing.T, e *env) {
		now := time.Now()
		// A grant revoked long ago: its tokens have all expired.
		old := e.grant(t, e.a)
		if err := e.store.RevokeGrant(t.Context(), e.a.ID, old, now.Add(-AccessTokenLifetime-DefaultSkew-time.Minute)); err != nil {
			t.Fatal(err)
		}
		// A token that expired 30 s ago is still accepted (skew 60 s), so its
		// revocation must survive a refill.
		c := e.claims(e.a, e.grant(t, e.a))
		c.IssuedAt, c.Expiry = now.Add(-AccessTokenLifetime).Unix(), now.Add(-30*time.Second).Unix()
		raw := e.mint(t, e.a, c)
		wantStatus(t, verifyErr(t, e, e.a, raw), 0, "token 30 s past exp, within skew")
		if err := e.store.RevokeToken(t.Context(), &storage.RevokedToken{SiteID: e.a.ID, JTI: c.JTI, ExpiresAt: time.Unix(c.Expiry, 0), RevokedAt: now}); err != nil {
			t.Fatal(err)
		}
		e.cache.flush(t)
		wantStatus(t, verifyErr(t, e, e.a, raw), 401, "revoked token within skew after a refill")
		if e.cache.has(t, grantKey(e.a.ID, old)) {
			t.Error("refill copied a grant revoked before any live token was issued")
		}
		if d, _ := e.cache.ttl(jtiKey(e.a.ID, c.JTI)); d != 30*time.Second {
			t.Errorf("copy of the token within skew lives %v, want 30s (exp+skew-now)", d)
		}
	})
}

func TestRevocationCopyTTLs(t *testing.T) {
	eachBackend(t, nil, func(t *testing.T, e *env) {
		now := time.Now()
		g := e.grant(t, e.a)
		if err := e.v.RevokeGrant(t.Context(), e.a.ID, g, now); err != nil {
			t.Fatal(err)
		}
		if d, ok := e.cache.ttl(grantKey(e.a.ID, g)); !ok || d != AccessTokenLifetime+DefaultSkew {
			t.Errorf("grant copy TTL %v (written %v), want %v", d, ok, AccessTokenLifetime+DefaultSkew)
		}
		exp := now.Add(17 * time.Minute)
		if err := e.v.RevokeToken(t.Context(), e.a.ID, "jti-ttl", exp, now); err != nil {
			t.Fatal(err)
		}
		if d, ok := e.cache.ttl(jtiKey(e.a.ID, "jti-ttl")); !ok || d != 17*time.Minute+DefaultSkew {
			t.Errorf("jti copy TTL %v (written %v), want %v", d, ok, 17*time.Minute+DefaultSkew)
		}
		// A token that has expired (beyond skew) needs no copy.
		if err := e.v.RevokeToken(t.Context(), e.a.ID, "jti-expired", now.Add(-2*DefaultSkew), now); err != nil {
			t.Fatal(err)
		}
		if _, ok := e.cache.ttl(jtiKey(e.a.ID, "jti-expired")); ok {
			t.Error("a copy was written for a token that has expired")
		}
		// Keys are per site, in the site's hash slot.
		for _, k := range []string{markerKey(e.a.ID), jtiKey(e.a.ID, "x"), grantKey(e.a.ID, "y")} {
			if want := fmt.Sprintf("{s%d}:rev:", e.a.ID); !strings.HasPrefix(k, want) {
				t.Errorf("key %q lacks the site hash tag %q", k, want)
			}
		}
	})
}

// TestCacheUnavailable: with the cache down the database decides, for
// valid and revoked tokens alike; writers still revoke durably.
func TestCacheUnavailable(t *testing.T) {
	eachBackend(t, nil, func(t *testing.T, e *env) {
		valid, _ := e.token(t, e.a)
		rawJTI, cJTI := e.token(t, e.a)
		rawGrant, cGrant := e.token(t, e.a)
		if err := e.v.RevokeToken(t.Context(), e.a.ID, cJTI.JTI, time.Unix(cJTI.Expiry, 0), time.Now()); err != nil {
			t.Fatal(err)
		}
		if err := e.v.RevokeGrant(t.Context(), e.a.ID, cGrant.GrantID, time.Now()); err != nil {
			t.Fatal(err)
		}

		e.cache.down.Store(true)
		wantStatus(t, verifyErr(t, e, e.a, valid), 0, "valid token, cache down")
		wantStatus(t, verifyErr(t, e, e.a, rawJTI), 401, "revoked jti, cache down")
		wantStatus(t, verifyErr(t, e, e.a, rawGrant), 401, "revoked grant, cache down")

		// A token naming a grant the database does not have is refused.
		ghost := e.mint(t, e.a, e.claims(e.a, "grt_ghost"))
		wantStatus(t, verifyErr(t, e, e.a, ghost), 401, "unknown grant, cache down")

		// Revocations while the cache is down count at once (the database
		// decides) and are not lost when it returns without its data.
		rawLate, cLate := e.token(t, e.a)
		if err := e.v.RevokeGrant(t.Context(), e.a.ID, cLate.GrantID, time.Now()); err != nil {
			t.Fatalf("RevokeGrant with the cache down: %v (the database write is what counts)", err)
		}
		wantStatus(t, verifyErr(t, e, e.a, rawLate), 401, "grant revoked while the cache is down")
		if !strings.Contains(e.logs.String(), "revocation cache unavailable") {
			t.Error("degraded operation was not logged")
		}

		e.cache.down.Store(false)
		e.cache.flush(t) // it came back empty
		wantStatus(t, verifyErr(t, e, e.a, rawLate), 401, "grant revoked while the cache was down, after it came back empty")
		wantStatus(t, verifyErr(t, e, e.a, valid), 0, "valid token after the cache came back")
	})
}

// TestRevokedWhileCacheDown: revoked while the cache was unreachable, and
// the cache then comes back with its old contents (the site's marker, no
// copy). The marker is deleted as soon as the cache answers, so the
// revocation holds within moments, not after the marker's lifetime.
func TestRevokedWhileCacheDown(t *testing.T) {
	eachBackend(t, nil, func(t *testing.T, e *env) {
		raw, c := e.token(t, e.a)
		wantStatus(t, verifyErr(t, e, e.a, raw), 0, "valid token, cache up") // the marker is set
		e.cache.down.Store(true)
		if err := e.v.RevokeToken(t.Context(), e.a.ID, c.JTI, time.Unix(c.Expiry, 0), time.Now()); err != nil {
			t.Fatal(err)
		}
		wantStatus(t, verifyErr(t, e, e.a, raw), 401, "revoked with the cache down")
		e.cache.down.Store(false)
		deadline := time.Now().Add(5 * time.Second)
		for verifyErr(t, e, e.a, raw) == nil {
			if time.Now().After(deadline) {
				t.Fatal("a token revoked during the outage is accepted after the cache came back with its old contents")
			}
			time.Sleep(20 * time.Millisecond)
		}
		wantStatus(t, verifyErr(t, e, e.a, raw), 401, "revoked during the outage, cache back")
	})
}

// TestCopyWriteFailure: when a copy cannot be written the marker goes, so
// the next check refills from the database and the revocation holds.
func TestCopyWriteFailure(t *testing.T) {
	eachBackend(t, nil, func(t *testing.T, e *env) {
		raw, c := e.token(t, e.a)
		rawT, cT := e.token(t, e.a)
		for _, r := range []string{raw, rawT} {
			wantStatus(t, verifyErr(t, e, e.a, r), 0, "before revocation")
		}
		if !e.cache.has(t, markerKey(e.a.ID)) {
			t.Fatal("no marker after a check")
		}
		e.cache.setFailSet(func(key string) bool {
			return strings.Contains(key, ":rev:grant:") || strings.Contains(key, ":rev:jti:")
		})
		if err := e.v.RevokeGrant(t.Context(), e.a.ID, c.GrantID, time.Now()); err != nil {
			t.Fatalf("RevokeGrant: %v (the database write succeeded)", err)
		}
		if e.cache.has(t, markerKey(e.a.ID)) {
			t.Fatal("the marker survived a failed copy")
		}
		if !strings.Contains(e.logs.String(), "revocation copy not written") {
			t.Error("the failed copy was not logged")
		}
		wantStatus(t, verifyErr(t, e, e.a, raw), 401, "revoked grant whose copy failed")

		if err := e.v.RevokeToken(t.Context(), e.a.ID, cT.JTI, time.Unix(cT.Expiry, 0), time.Now()); err != nil {
			t.Fatalf("RevokeToken: %v", err)
		}
		wantStatus(t, verifyErr(t, e, e.a, rawT), 401, "revoked token whose copy failed")

		// Copies failing during the refill: the answer comes from the
		// database, and the marker stays unset so the next check retries.
		if e.cache.has(t, markerKey(e.a.ID)) {
			t.Error("the marker was set although the refill could not write its copies")
		}
		e.cache.setFailSet(nil)
		wantStatus(t, verifyErr(t, e, e.a, raw), 401, "after the cache recovers")
		if !e.cache.has(t, markerKey(e.a.ID)) || !e.cache.has(t, grantKey(e.a.ID, c.GrantID)) {
			t.Error("a refill after recovery did not restore marker and copy")
		}
	})
}

// TestBothUnavailable: with neither the cache nor the database able to
// answer, every token gets 503: never 401 for a valid token, never 200 for a
// revoked one. While the cache has its marker it answers alone.
func TestBothUnavailable(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		e := newEnv(t, s, newMemoryCache(t), nil)
		valid, _ := e.token(t, e.a)
		revoked, c := e.token(t, e.a)
		if err := e.v.RevokeGrant(t.Context(), e.a.ID, c.GrantID, time.Now()); err != nil {
			t.Fatal(err)
		}
		wantStatus(t, verifyErr(t, e, e.a, valid), 0, "valid token")
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}

		// The cache alone: marker set, copies present.
		wantStatus(t, verifyErr(t, e, e.a, valid), 0, "valid token, database down, cache complete")
		wantStatus(t, verifyErr(t, e, e.a, revoked), 401, "revoked token, database down, cache complete")

		// Marker gone (cache restarted): the cache cannot be trusted and the
		// database cannot refill it.
		if err := e.cache.Cache.Delete(t.Context(), markerKey(e.a.ID)); err != nil {
			t.Fatal(err)
		}
		got := wantStatus(t, verifyErr(t, e, e.a, valid), 503, "valid token, database down, marker gone")
		if got.Code != CodeTemporarilyUnavailable {
			t.Errorf("code %q", got.Code)
		}
		// A copy that is there is still true.
		wantStatus(t, verifyErr(t, e, e.a, revoked), 401, "revoked token with its copy, marker gone")

		e.cache.down.Store(true)
		wantStatus(t, verifyErr(t, e, e.a, valid), 503, "valid token, both down")
		wantStatus(t, verifyErr(t, e, e.a, revoked), 503, "revoked token, both down")
		if !strings.Contains(e.logs.String(), "level=ERROR") {
			t.Error("the 503s were not logged")
		}
	})
}

// TestRefillSharedPerSite: concurrent checks of a site whose marker is gone
// share one refill.
func TestRefillSharedPerSite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := quickEnv(t, nil)
		cs := &countingStore{Store: e.store, gate: make(chan struct{})}
		opts := e.options
		opts.Store = cs
		v := New(opts)
		const n = 20
		toks := make([]string, n)
		for i := range toks {
			toks[i], _ = e.token(t, e.a)
		}
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for _, raw := range toks {
			wg.Go(func() {
				_, err := v.Verify(context.Background(), e.a, raw)
				errs <- err
			})
		}
		// Let every check reach the refill (all of them blocked: on the gate,
		// or waiting for the refill in flight), then release it.
		synctest.Wait()
		close(cs.gate)
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Errorf("Verify: %v", err)
			}
		}
		if got := cs.refills.Load(); got != 1 {
			t.Errorf("%d refills for one site, want 1", got)
		}
		// The marker now stands: later checks need no refill.
		for _, raw := range toks[:3] {
			if _, err := v.Verify(t.Context(), e.a, raw); err != nil {
				t.Fatal(err)
			}
		}
		if got := cs.refills.Load(); got != 1 {
			t.Errorf("%d refills after the marker was set, want 1", got)
		}
		// Site B has its own marker and its own refill.
		rawB, _ := e.token(t, e.b)
		if _, err := v.Verify(t.Context(), e.b, rawB); err != nil {
			t.Fatal(err)
		}
		if got := cs.refills.Load(); got != 2 {
			t.Errorf("%d refills after site B's first check, want 2", got)
		}
	})
}

// TestRefillWaiterGivesUp: a request whose context ends does not wait for
// a slow refill, and the refill is not cancelled for the others.
func TestRefillWaiterGivesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := quickEnv(t, nil)
		cs := &countingStore{Store: e.store, gate: make(chan struct{})}
		opts := e.options
		opts.Store = cs
		v := New(opts)
		raw, _ := e.token(t, e.a)
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		done := make(chan error, 1)
		go func() {
			_, err := v.Verify(ctx, e.a, raw)
			done <- err
		}()
		select {
		case err := <-done:
			wantStatus(t, err, 503, "check whose context ended during the refill")
		case <-time.After(5 * time.Second):
			close(cs.gate)
			t.Fatal("Verify kept waiting for a refill after its context ended")
		}
		close(cs.gate)
		if _, err := v.Verify(t.Context(), e.a, raw); err != nil {
			t.Fatalf("after the refill: %v", err)
		}
	})
}
