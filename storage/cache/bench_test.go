package cache

import (
	"crypto/rand"
	"testing"
	"time"

	"github.com/lectern/lectern/storage/storagetest"
)

// BenchmarkRedisGet is one autopipelined GET per operation from parallel
// callers, with redisotel's hook installed (the default: the global
// provider, a no-op unless tracing is configured) and without it
// (NoTracing, what the server asks for while tracing is off).
//
//	go test -run xxx -bench RedisGet -benchmem ./storage/cache
func BenchmarkRedisGet(b *testing.B) {
	url := storagetest.RedisURL(b)
	for _, bc := range []struct {
		name      string
		noTracing bool
	}{{"hook", false}, {"no-tracing", true}} {
		b.Run(bc.name, func(b *testing.B) {
			r, err := NewRedis(b.Context(), url, &RedisOptions{Prefix: "lectern-bench:" + rand.Text() + ":", NoTracing: bc.noTracing})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = r.Close() })
			if err := r.Set(b.Context(), "k", []byte("value"), time.Minute); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.SetParallelism(8)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if v, err := r.Get(b.Context(), "k"); err != nil || string(v) != "value" {
						b.Errorf("Get = %q, %v", v, err)
						return
					}
				}
			})
		})
	}
}
