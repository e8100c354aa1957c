package sqlstore

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lectern/lectern/storage"
)

// BenchmarkRotateParallel rotates refresh tokens on PostgreSQL the way W2
// does: many clients, each with its own chain, every rotation durable
// (synchronous_commit on) and batched with the concurrent ones. The
// sub-benchmarks set the table's fillfactor: 100 (PostgreSQL's default) and
// 70 (migration 0015). hot% is the share of used_at updates that were HOT.
//
//	go test -run '^$' -bench RotateParallel -benchtime 20000x -count 3 ./storage/sqlstore/
func BenchmarkRotateParallel(b *testing.B) {
	for _, ff := range benchFillfactors {
		b.Run(fmt.Sprintf("fillfactor=%d", ff), func(b *testing.B) {
			s := pgStore(b)
			ctx := context.Background()
			if err := s.Exec(ctx, fmt.Sprintf("ALTER TABLE refresh_tokens SET (fillfactor = %d)", ff)); err != nil {
				b.Fatal(err)
			}
			site := &storage.Site{Slug: "s", Name: "S", Origin: "https://s.test", RegistrationVariant: "B"}
			if err := s.CreateSite(ctx, site); err != nil {
				b.Fatal(err)
			}
			u := &storage.User{ID: "usr_bench", Email: "b@x.test", Name: "B"}
			if err := s.CreateUser(ctx, u); err != nil {
				b.Fatal(err)
			}
			var seq atomic.Int64
			b.SetParallelism(32) // 64 workers on 2 cores, as flowbench -c 64
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				now := time.Now().UTC().Truncate(time.Millisecond)
				id := fmt.Sprintf("grt_bench_%d", seq.Add(1))
				g := &storage.Grant{ID: id, SiteID: site.ID, ClientID: "c", UserID: u.ID, Scopes: []string{"openid"}, Resource: site.Origin,
					AuthTime: now, CreatedAt: now, ExpiresAt: now.Add(90 * 24 * time.Hour), LastUsedAt: now}
				cur := hash32()
				if err := s.CreateGrant(ctx, g, &storage.RefreshToken{SiteID: site.ID, GrantID: id, TokenHash: cur, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
					b.Error(err)
					return
				}
				for pb.Next() {
					next := hash32()
					now := time.Now().UTC()
					if _, err := s.RotateRefreshToken(ctx, site.ID, cur, &storage.RefreshToken{TokenHash: next, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}, now); err != nil {
						b.Error(err)
						return
					}
					cur = next
				}
			})
			b.StopTimer()
			// Backends report their counts to pg_stat_* once idle for up to
			// a second (PGSTAT_MIN_INTERVAL): read too early, hot% is missing.
			time.Sleep(1500 * time.Millisecond)
			var upd, hot float64
			if err := s.sqlDB.QueryRowContext(ctx, "SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relid = 'refresh_tokens'::regclass").Scan(&upd, &hot); err == nil && upd > 0 {
				b.ReportMetric(100*hot/upd, "hot%")
			}
		})
	}
}

var benchFillfactors = []int{100, 70}
