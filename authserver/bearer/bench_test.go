package bearer

import (
	"context"
	"testing"

	"github.com/lectern/lectern/storage/sqlstore/sqltest"
)

// benchEnv is an env on SQLite, outside any bubble (the real clock), with
// the site's revocation hash already filled (the steady state: one cache
// round trip per check).
func benchEnv(b *testing.B, c *testCache, tweak func(*Options)) *env {
	b.Helper()
	e := newEnv(b, sqltest.SQLite(b), c, tweak)
	raw, _ := e.token(b, e.a)
	if _, err := e.v.Verify(context.Background(), e.a, raw); err != nil {
		b.Fatal(err)
	}
	return e
}

func benchVerifyOne(b *testing.B, e *env) {
	raw, _ := e.token(b, e.a)
	ctx := context.Background()
	if _, err := e.v.Verify(ctx, e.a, raw); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.v.Verify(ctx, e.a, raw); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerify: a token seen before (verified-token cache hit) and the
// revocation check against the in-memory cache.
func BenchmarkVerify(b *testing.B) {
	benchVerifyOne(b, benchEnv(b, newMemoryCache(b), nil))
}

// BenchmarkVerifyUncached: every token is new, so each check parses and
// verifies an ES256 signature.
func BenchmarkVerifyUncached(b *testing.B) {
	e := benchEnv(b, newMemoryCache(b), func(o *Options) { o.CacheEntries = -1 })
	g := e.grant(b, e.a)
	toks := make([]string, 512)
	for i := range toks {
		toks[i] = e.mint(b, e.a, e.claims(e.a, g))
	}
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := e.v.Verify(ctx, e.a, toks[i%len(toks)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkVerifyParallel: the cached path from all Ps at once.
func BenchmarkVerifyParallel(b *testing.B) {
	e := benchEnv(b, newMemoryCache(b), nil)
	toks := make([]string, 64)
	for i := range toks {
		toks[i], _ = e.token(b, e.a)
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			if _, err := e.v.Verify(ctx, e.a, toks[i%len(toks)]); err != nil {
				b.Error(err)
				return
			}
			i++
		}
	})
}

// BenchmarkVerifyRedis: the cached path with the revocation check on Redis
// (one HMGET round trip); skipped when Redis is unreachable.
func BenchmarkVerifyRedis(b *testing.B) {
	benchVerifyOne(b, benchEnv(b, newRedisCache(b), nil))
}

// BenchmarkVerifyCacheDown: the cached path while the cache is down: the
// revocation check answers from the replica's in-memory copy.
func BenchmarkVerifyCacheDown(b *testing.B) {
	e := benchEnv(b, newMemoryCache(b), nil)
	e.cache.down.Store(true)
	benchVerifyOne(b, e)
}
