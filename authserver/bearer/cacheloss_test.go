package bearer

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lectern/lectern/storage/sqlstore"
	"github.com/lectern/lectern/storage/sqlstore/sqltest"
	"github.com/lectern/lectern/tenant"
)

// Issue 15: a revoked access token came back to life for minutes when Redis
// lost one copy (eviction) or the latest writes (a failover to a replica
// that had not received them), because the site's "complete" marker
// survived. Whatever the cache loses of a site's revocation state, a
// revoked token stays refused. The losses are made on a real Redis, on the
// keys the verifier wrote, without knowing their layout: every key of the
// site's revocation state is evicted in turn, and the state is put back to
// what it was before the revocation.
func TestLostRevocationCopiesNeverRevive(t *testing.T) {
	for _, db := range []struct {
		name string
		open func(testing.TB) *sqlstore.Store
	}{{"sqlite", sqltest.SQLite}, {"postgres", sqltest.Postgres}} {
		t.Run(db.name, func(t *testing.T) {
			for _, kind := range []string{"jti", "grant"} {
				t.Run(kind, func(t *testing.T) {
					e := newEnv(t, db.open(t), newRedisCache(t), nil)
					admin := redisAdmin(t, e.cache.redisURL)
					pattern := e.cache.prefix + "{s" + itoa(e.a.ID) + "}:rev*"
					// A second replica over the same store and cache.
					peer := New(e.options)
					raw, c := e.token(t, e.a)
					wantStatus(t, verifyErr(t, e, e.a, raw), 0, "before revocation")
					wantStatus(t, verifyErrWith(t, peer, e.a, raw), 0, "before revocation, at the peer")
					before := snapshot(t, admin, pattern)

					var err error
					if kind == "jti" {
						err = e.v.RevokeToken(t.Context(), e.a.ID, c.JTI, time.Unix(c.Expiry, 0), time.Now())
					} else {
						err = e.v.RevokeGrant(t.Context(), e.a.ID, c.GrantID, time.Now())
					}
					if err != nil {
						t.Fatal(err)
					}
					wantStatus(t, verifyErr(t, e, e.a, raw), 401, "after revocation")
					wantStatus(t, verifyErrWith(t, peer, e.a, raw), 401, "after revocation, at the peer")

					// Eviction: each key alone.
					after := snapshot(t, admin, pattern)
					if len(after) == 0 {
						t.Fatalf("no revocation state under %s", pattern)
					}
					for key := range after {
						if err := admin.Del(t.Context(), key).Err(); err != nil {
							t.Fatal(err)
						}
						wantStatus(t, verifyErr(t, e, e.a, raw), 401, "revoked token after "+key+" was evicted")
						wantStatus(t, verifyErrWith(t, peer, e.a, raw), 401, "revoked token at the peer after "+key+" was evicted")
						restore(t, admin, pattern, after)
					}

					// Failover: the new master never got the writes made
					// since the snapshot. The replica that revoked knows at
					// once; the peer knows after its next poll, which comes
					// before a failover completes (a poll a second, a
					// failover takes several).
					restore(t, admin, pattern, before)
					wantStatus(t, verifyErr(t, e, e.a, raw), 401, "revoked token after the cache lost the latest writes")
					restore(t, admin, pattern, before)
					if err := peer.versions.poll(t.Context()); err != nil {
						t.Fatal(err)
					}
					wantStatus(t, verifyErrWith(t, peer, e.a, raw), 401, "revoked token at the peer after the cache lost the latest writes")
				})
			}
		})
	}
}

func itoa(id tenant.ID) string { return strconv.FormatInt(int64(id), 10) }

func redisAdmin(t *testing.T, url string) *redis.Client {
	t.Helper()
	o, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(o)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

type dumped struct {
	value string
	ttl   time.Duration
}

// snapshot DUMPs every key matching pattern.
func snapshot(t *testing.T, admin *redis.Client, pattern string) map[string]dumped {
	t.Helper()
	ctx := context.Background()
	out := map[string]dumped{}
	iter := admin.Scan(ctx, 0, pattern, 100).Iterator()
	for iter.Next(ctx) {
		k := iter.Val()
		v, err := admin.Dump(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		ttl, err := admin.PTTL(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if ttl < 0 {
			ttl = 0
		}
		out[k] = dumped{v, ttl}
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// restore makes the keys matching pattern exactly those of snap.
func restore(t *testing.T, admin *redis.Client, pattern string, snap map[string]dumped) {
	t.Helper()
	ctx := context.Background()
	for k := range snapshot(t, admin, pattern) {
		if _, ok := snap[k]; !ok {
			if err := admin.Del(ctx, k).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	for k, d := range snap {
		if err := admin.RestoreReplace(ctx, k, d.ttl, d.value).Err(); err != nil {
			t.Fatal(err)
		}
	}
}
