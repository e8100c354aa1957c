package bearer

import (
	"context"
	"errors"
	"fmt"
	"strconv"
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
		t.Run("revoked by another replica, seen at its next poll", func(t *testing.T) {
			g := e.grant(t, e.a)
			raw := e.mint(t, e.a, e.claims(e.a, g))
			wantStatus(t, verifyErr(t, e, e.a, raw), 0, "before revocation")
			// Another replica revoked in the database, and its copy never
			// reached the cache (it crashed, or the write was lost).
			if _, err := e.store.RevokeGrant(t.Context(), e.a.ID, g, time.Now()); err != nil {
				t.Fatal(err)
			}
			if err := e.v.versions.poll(t.Context()); err != nil {
				t.Fatal(err)
			}
			wantStatus(t, verifyErr(t, e, e.a, raw), 401, "after the poll saw the new version")
		})
		t.Run("MarkGrantRevoked after the store revoked it", func(t *testing.T) {
			g := e.grant(t, e.a)
			raw := e.mint(t, e.a, e.claims(e.a, g))
			wantStatus(t, verifyErr(t, e, e.a, raw), 0, "before revocation")
			// Reuse detection revokes in the database itself...
			if _, err := e.store.RevokeGrant(t.Context(), e.a.ID, g, time.Now()); err != nil {
				t.Fatal(err)
			}
			// ...and MarkGrantRevoked tells this replica at once.
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

// TestRevocationsKeepTheHashCurrent: a replica's own revocations are added
// to the site's hash and advance its version, so the next check trusts it
// without a refill.
func TestRevocationsKeepTheHashCurrent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := quickEnv(t, nil)
		cs := &countingStore{Store: e.store}
		opts := e.options
		opts.Store = cs
		e.v = New(opts)
		fresh, _ := e.token(t, e.a)
		wantStatus(t, verifyErr(t, e, e.a, fresh), 0, "first check")
		if got := cs.refills.Load(); got != 1 {
			t.Fatalf("%d refills for the first check, want 1", got)
		}
		for range 3 {
			_, c := e.token(t, e.a)
			if err := e.v.RevokeToken(t.Context(), e.a.ID, c.JTI, time.Unix(c.Expiry, 0), time.Now()); err != nil {
				t.Fatal(err)
			}
			if err := e.v.RevokeGrant(t.Context(), e.a.ID, c.GrantID, time.Now()); err != nil {
				t.Fatal(err)
			}
		}
		if v, _ := e.cache.state(t, e.a.ID); v != 6 {
			t.Fatalf("hash version %d after six revocations, want 6", v)
		}
		wantStatus(t, verifyErr(t, e, e.a, fresh), 0, "check after revocations")
		if got := cs.refills.Load(); got != 1 {
			t.Errorf("%d refills after this replica's own revocations, want still 1", got)
		}
	})
}

// TestRefillAfterCacheLoss: a cache that lost everything (flush, restart)
// has lost the site's hash; the next check refills it from the database.
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
		if _, err := e.store.RevokeGrant(t.Context(), e.a.ID, cDBOnly.GrantID, now); err != nil {
			t.Fatal(err)
		}

		e.cache.flush(t)
		if v, _ := e.cache.state(t, e.a.ID); v != -1 {
			t.Fatal("flush left the hash behind")
		}
		time.Sleep(10 * time.Second)

		wantStatus(t, verifyErr(t, e, e.a, fresh), 0, "a valid token after the flush")
		v, vals := e.cache.state(t, e.a.ID, fieldJTI+cJTI.JTI, fieldGrant+cGrant.GrantID, fieldGrant+cDBOnly.GrantID)
		if v != 3 {
			t.Fatalf("refilled hash at version %d, want 3", v)
		}
		if d, _ := e.cache.ttl(stateKey(e.a.ID)); d != RefillInterval {
			t.Errorf("hash TTL %v, want %v", d, RefillInterval)
		}
		// Every revocation is back, with when its tokens stop mattering.
		for i, want := range []time.Time{time.Unix(cJTI.Expiry, 0).Add(DefaultSkew), now.Add(AccessTokenLifetime + DefaultSkew), now.Add(AccessTokenLifetime + DefaultSkew)} {
			if string(vals[i]) != strconv.FormatInt(want.Unix(), 10) {
				t.Errorf("field %d = %s, want %d", i, vals[i], want.Unix())
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
		if _, err := e.store.RevokeGrant(t.Context(), e.a.ID, old, now.Add(-AccessTokenLifetime-DefaultSkew-time.Minute)); err != nil {
			t.Fatal(err)
		}
		// A token that expired 30 s ago is still accepted (skew 60 s), so its
		// revocation must survive a refill.
		c := e.claims(e.a, e.grant(t, e.a))
		c.IssuedAt, c.Expiry = now.Add(-AccessTokenLifetime).Unix(), now.Add(-30*time.Second).Unix()
		raw := e.mint(t, e.a, c)
		wantStatus(t, verifyErr(t, e, e.a, raw), 0, "token 30 s past exp, within skew")
		if _, err := e.store.RevokeToken(t.Context(), &storage.RevokedToken{SiteID: e.a.ID, JTI: c.JTI, ExpiresAt: time.Unix(c.Expiry, 0), RevokedAt: now}); err != nil {
			t.Fatal(err)
		}
		e.cache.flush(t)
		wantStatus(t, verifyErr(t, e, e.a, raw), 401, "revoked token within skew after a refill")
		_, vals := e.cache.state(t, e.a.ID, fieldGrant+old, fieldJTI+c.JTI)
		if vals[0] != nil {
			t.Error("refill copied a grant revoked before any live token was issued")
		}
		if want := strconv.FormatInt(now.Add(30*time.Second).Unix(), 10); string(vals[1]) != want {
			t.Errorf("copy of the token within skew = %s, want %s (exp+skew)", vals[1], want)
		}
	})
}

func TestRevocationCopyValues(t *testing.T) {
	eachBackend(t, nil, func(t *testing.T, e *env) {
		fresh, _ := e.token(t, e.a)
		wantStatus(t, verifyErr(t, e, e.a, fresh), 0, "fills the hash")
		now := time.Now()
		g := e.grant(t, e.a)
		if err := e.v.RevokeGrant(t.Context(), e.a.ID, g, now); err != nil {
			t.Fatal(err)
		}
		exp := now.Add(17 * time.Minute)
		if err := e.v.RevokeToken(t.Context(), e.a.ID, "jti-ttl", exp, now); err != nil {
			t.Fatal(err)
		}
		v, vals := e.cache.state(t, e.a.ID, fieldGrant+g, fieldJTI+"jti-ttl")
		if v != 2 {
			t.Errorf("hash version %d, want 2", v)
		}
		for i, want := range []time.Time{now.Add(AccessTokenLifetime + DefaultSkew), exp.Add(DefaultSkew)} {
			if string(vals[i]) != strconv.FormatInt(want.Unix(), 10) {
				t.Errorf("field %d = %s, want %d", i, vals[i], want.Unix())
			}
		}
		// One key per site, in the site's hash slot.
		if want := fmt.Sprintf("{s%d}:rev:", e.a.ID); !strings.HasPrefix(stateKey(e.a.ID), want) {
			t.Errorf("key %q lacks the site hash tag %q", stateKey(e.a.ID), want)
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

// TestOfflineCopies: while the cache is down a replica decides from a
// copy of the site's revocations in its own memory, read once, so requests
// cost no database query; a revocation anywhere raises the site's version
// and the copy is read again.
func TestOfflineCopies(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := quickEnv(t, nil)
		cs := &countingStore{Store: e.store}
		opts := e.options
		opts.Store = cs
		e.v = New(opts)
		valid, _ := e.token(t, e.a)
		revoked, c := e.token(t, e.a)
		if err := e.v.RevokeGrant(t.Context(), e.a.ID, c.GrantID, time.Now()); err != nil {
			t.Fatal(err)
		}
		e.cache.down.Store(true)
		refills := cs.refills.Load()
		for range 50 {
			wantStatus(t, verifyErr(t, e, e.a, valid), 0, "valid token, cache down")
			wantStatus(t, verifyErr(t, e, e.a, revoked), 401, "revoked token, cache down")
		}
		if got := cs.refills.Load() - refills; got != 1 {
			t.Errorf("%d reads of the site's revocations for 100 checks, want 1", got)
		}
		if got := cs.lookups.Load(); got != 0 {
			t.Errorf("%d per-request database lookups, want none", got)
		}
		// Another replica revokes; this one sees the new version at its
		// next poll and reads the copy again.
		other, cOther := e.token(t, e.a)
		wantStatus(t, verifyErr(t, e, e.a, other), 0, "before the revocation elsewhere")
		if _, err := e.store.RevokeToken(t.Context(), &storage.RevokedToken{SiteID: e.a.ID, JTI: cOther.JTI, ExpiresAt: time.Unix(cOther.Expiry, 0), RevokedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
		if err := e.v.versions.poll(t.Context()); err != nil {
			t.Fatal(err)
		}
		wantStatus(t, verifyErr(t, e, e.a, other), 401, "revoked elsewhere while the cache is down")
		wantStatus(t, verifyErr(t, e, e.a, valid), 0, "valid token after the copy was read again")
		if got := cs.refills.Load() - refills; got != 2 {
			t.Errorf("%d reads of the site's revocations, want 2", got)
		}
		// Unused copies are dropped.
		e.v.local.sweep(time.Now().Add(activeWindow + time.Second))
		if n := len(e.v.local.sites); n != 0 {
			t.Errorf("%d offline copies after the active window, want 0", n)
		}
	})
}

// TestRevokedWhileCacheDown: revoked while the cache was unreachable, and
// the cache then comes back with its old contents (the site's hash without
// the revocation). The hash is behind the version every replica knows, so
// it is refilled before it is believed.
func TestRevokedWhileCacheDown(t *testing.T) {
	eachBackend(t, nil, func(t *testing.T, e *env) {
		raw, c := e.token(t, e.a)
		wantStatus(t, verifyErr(t, e, e.a, raw), 0, "valid token, cache up") // the hash is filled
		// A second replica, over the same store and cache.
		peer := New(e.options)
		wantStatus(t, verifyErrWith(t, peer, e.a, raw), 0, "valid token at the peer")
		e.cache.down.Store(true)
		if err := e.v.RevokeToken(t.Context(), e.a.ID, c.JTI, time.Unix(c.Expiry, 0), time.Now()); err != nil {
			t.Fatal(err)
		}
		wantStatus(t, verifyErr(t, e, e.a, raw), 401, "revoked with the cache down")
		e.cache.down.Store(false)
		wantStatus(t, verifyErr(t, e, e.a, raw), 401, "revoked during the outage, cache back with its old hash")
		if err := peer.versions.poll(t.Context()); err != nil {
			t.Fatal(err)
		}
		wantStatus(t, verifyErrWith(t, peer, e.a, raw), 401, "at the peer after its poll")
	})
}

// TestCopyWriteFailure: a copy that cannot be written leaves the hash
// behind the new version, so the next check refills from the database and
// the revocation holds.
func TestCopyWriteFailure(t *testing.T) {
	eachBackend(t, nil, func(t *testing.T, e *env) {
		raw, c := e.token(t, e.a)
		rawT, cT := e.token(t, e.a)
		for _, r := range []string{raw, rawT} {
			wantStatus(t, verifyErr(t, e, e.a, r), 0, "before revocation")
		}
		e.cache.setFailWrite(func(string) bool { return true })
		if err := e.v.RevokeGrant(t.Context(), e.a.ID, c.GrantID, time.Now()); err != nil {
			t.Fatalf("RevokeGrant: %v (the database write succeeded)", err)
		}
		if !strings.Contains(e.logs.String(), "revocation copy not written") {
			t.Error("the failed copy was not logged")
		}
		wantStatus(t, verifyErr(t, e, e.a, raw), 401, "revoked grant whose copy failed")

		if err := e.v.RevokeToken(t.Context(), e.a.ID, cT.JTI, time.Unix(cT.Expiry, 0), time.Now()); err != nil {
			t.Fatalf("RevokeToken: %v", err)
		}
		wantStatus(t, verifyErr(t, e, e.a, rawT), 401, "revoked token whose copy failed")

		// The refill could not write either: the answer came from the
		// database, and the hash is still behind.
		if v, _ := e.cache.state(t, e.a.ID); v != 0 {
			t.Errorf("hash version %d after failed writes, want 0 (the first fill)", v)
		}
		// Meanwhile the refill's answer stood in for the hash; a second
		// later the cache is tried again.
		wantStatus(t, verifyErr(t, e, e.a, raw), 401, "while the cache refuses writes")
		e.cache.setFailWrite(nil)
		time.Sleep(cacheRetry)
		wantStatus(t, verifyErr(t, e, e.a, raw), 401, "after the cache recovers")
		if v, vals := e.cache.state(t, e.a.ID, fieldGrant+c.GrantID, fieldJTI+cT.JTI); v != 2 || vals[0] == nil || vals[1] == nil {
			t.Errorf("after recovery: version %d, fields %q; want version 2 with both", v, vals)
		}
	})
}

// TestBothUnavailable: with neither the cache nor the database able to
// answer, every token gets 503: never 401 for a valid token, never 200 for a
// revoked one. While the cache holds the site's hash at the last version
// the database gave, it answers alone.
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

		// The cache alone: its hash is at the version last read.
		wantStatus(t, verifyErr(t, e, e.a, valid), 0, "valid token, database down, cache complete")
		wantStatus(t, verifyErr(t, e, e.a, revoked), 401, "revoked token, database down, cache complete")

		// Hash gone (cache restarted): the cache cannot be trusted and the
		// database cannot refill it.
		if err := e.cache.Cache.Delete(t.Context(), stateKey(e.a.ID)); err != nil {
			t.Fatal(err)
		}
		got := wantStatus(t, verifyErr(t, e, e.a, valid), 503, "valid token, database down, hash gone")
		if got.Code != CodeTemporarilyUnavailable {
			t.Errorf("code %q", got.Code)
		}
		wantStatus(t, verifyErr(t, e, e.a, revoked), 503, "revoked token, database down, hash gone")

		e.cache.down.Store(true)
		wantStatus(t, verifyErr(t, e, e.a, valid), 503, "valid token, both down")
		wantStatus(t, verifyErr(t, e, e.a, revoked), 503, "revoked token, both down")
		if !strings.Contains(e.logs.String(), "level=ERROR") {
			t.Error("the 503s were not logged")
		}
	})
}

// TestRefillSharedPerSite: concurrent checks of a site whose hash is gone
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
		// The hash now stands: later checks need no refill.
		for _, raw := range toks[:3] {
			if _, err := v.Verify(t.Context(), e.a, raw); err != nil {
				t.Fatal(err)
			}
		}
		if got := cs.refills.Load(); got != 1 {
			t.Errorf("%d refills after the hash was filled, want 1", got)
		}
		// Site B has its own hash and its own refill.
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

// TestVersionsPoll: Run's poll reads every site served recently in one
// query, and forgets sites idle for the active window; a version read on
// demand is trusted for versionMaxAge, then read again.
func TestVersionsPoll(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := quickEnv(t, nil)
		cs := &countingStore{Store: e.store}
		b := newVersionBook(cs)
		for _, s := range []*tenant.Site{e.a, e.b} {
			if v, ok := b.current(t.Context(), s.ID); !ok || v != 0 {
				t.Fatalf("current(%d) = %d, %v", s.ID, v, ok)
			}
		}
		if got := cs.versionReads.Load(); got != 2 {
			t.Fatalf("%d reads for two sites' first checks, want 2", got)
		}
		b.current(t.Context(), e.a.ID)
		if got := cs.versionReads.Load(); got != 2 {
			t.Fatalf("%d reads after a second check within versionMaxAge, want 2", got)
		}
		if _, err := e.store.RevokeGrant(t.Context(), e.b.ID, e.grant(t, e.b), time.Now()); err != nil {
			t.Fatal(err)
		}
		if err := b.poll(t.Context()); err != nil {
			t.Fatal(err)
		}
		if got := cs.versionReads.Load(); got != 3 {
			t.Fatalf("%d reads after a poll of two sites, want 3 (one query)", got)
		}
		if v, _ := b.current(t.Context(), e.b.ID); v != 1 {
			t.Fatalf("site B's version after the poll = %d, want 1", v)
		}
		time.Sleep(versionMaxAge)
		b.current(t.Context(), e.a.ID)
		if got := cs.versionReads.Load(); got != 4 {
			t.Fatalf("%d reads for a check after versionMaxAge without polls, want 4", got)
		}
		time.Sleep(activeWindow + time.Second)
		if sites := b.active(time.Now()); len(sites) != 0 {
			t.Fatalf("sites %v still polled after the active window", sites)
		}
	})
}

func verifyErrWith(t *testing.T, v *Verifier, site *tenant.Site, raw string) error {
	t.Helper()
	_, err := v.Verify(t.Context(), site, raw)
	return err
}
