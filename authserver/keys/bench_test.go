package keys_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lectern/lectern/authserver/keys"
	"github.com/lectern/lectern/storage/sqlstore"
	"github.com/lectern/lectern/storage/sqlstore/sqltest"
	"github.com/lectern/lectern/tenant"
)

var benchSiteCounts = []int{10, 10_000}

// benchRings creates n sites with a key ring each on a fresh SQLite store
// and warms every site's cache. CacheTTL is long so the loop measures the
// steady-state lookup, which is what nearly every request sees (a ring is
// re-read once per TTL per site).
func benchRings(b *testing.B, n int) (*keys.Manager, []tenant.ID) {
	b.Helper()
	ctx := context.Background()
	start := time.Now()
	s := sqltest.SQLite(b)
	m := newManager(b, s, newKEK(b), &keys.Options{CacheTTL: time.Hour})
	sites := insertSites(b, s, n)
	for _, site := range sites {
		if _, err := m.CreateRing(ctx, site); err != nil {
			b.Fatal(err)
		}
	}
	for _, site := range sites {
		if _, err := m.JWKS(ctx, site); err != nil {
			b.Fatal(err)
		}
		if _, err := m.SigningKey(ctx, site); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("set up %d sites in %v", n, time.Since(start).Round(time.Millisecond))
	return m, sites
}

func BenchmarkJWKS(b *testing.B) {
	benchLookup(b, func(ctx context.Context, m *keys.Manager, site tenant.ID) error {
		_, err := m.JWKS(ctx, site)
		return err
	})
}

func BenchmarkSigningKey(b *testing.B) {
	benchLookup(b, func(ctx context.Context, m *keys.Manager, site tenant.ID) error {
		_, err := m.SigningKey(ctx, site)
		return err
	})
}

// benchLookup measures lookup on stores of 10 and 10,000 sites. "sites=N"
// asks every site in turn, so with 10,000 sites each call touches memory
// the CPU caches no longer hold; "sites=N,hot=10" asks 10 sites spread over
// the same N, which isolates the cost of the number of cached rings from
// the cost of a large working set.
func benchLookup(b *testing.B, lookup func(context.Context, *keys.Manager, tenant.ID) error) {
	ctx := context.Background()
	for _, n := range benchSiteCounts {
		m, sites := benchRings(b, n) // once per benchmark and size; both sub-benchmarks share it
		run := func(name string, ask []tenant.ID) {
			b.Run(name, func(b *testing.B) {
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					if err := lookup(ctx, m, ask[i%len(ask)]); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
		}
		run(fmt.Sprintf("sites=%d", n), sites)
		if n > 10 {
			hot := make([]tenant.ID, 10)
			for i := range hot {
				hot[i] = sites[i*n/len(hot)]
			}
			run(fmt.Sprintf("sites=%d,hot=10", n), hot)
		}
	}
}

// insertSites adds n bare site rows in multi-row INSERTs (one CreateSite
// transaction per site would dominate the setup time) and returns their IDs.
// Only the key rings matter here; the sites need no hosts.
func insertSites(b *testing.B, s *sqlstore.Store, n int) []tenant.ID {
	b.Helper()
	ctx := context.Background()
	prefix := fmt.Sprintf("bench-%d", siteSeq.Add(1))
	now := time.Now().UTC()
	const batch = 1000
	for lo := 0; lo < n; lo += batch {
		hi := min(lo+batch, n)
		var sql strings.Builder
		sql.WriteString("INSERT INTO sites (slug, name, origin, registration_variant, created_at, updated_at) VALUES ")
		args := make([]any, 0, 6*(hi-lo))
		for i := lo; i < hi; i++ {
			if i > lo {
				sql.WriteByte(',')
			}
			sql.WriteString("(?, ?, ?, ?, ?, ?)")
			slug := fmt.Sprintf("%s-%d", prefix, i)
			args = append(args, slug, slug, "https://"+slug+".example.test", string(tenant.VariantOpen), now, now)
		}
		if err := s.Exec(ctx, sql.String(), args...); err != nil {
			b.Fatal(err)
		}
	}
	var ids []tenant.ID
	for after := tenant.ID(0); ; {
		page, err := s.ListSites(ctx, after, batch)
		if err != nil {
			b.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		for _, site := range page {
			ids = append(ids, site.ID)
		}
		after = page[len(page)-1].ID
	}
	if len(ids) != n {
		b.Fatalf("inserted %d sites, found %d", n, len(ids))
	}
	return ids
}

// BenchmarkSign signs an access-token-sized payload (ES256, compact JWS):
// once per refresh, twice per code exchange.
func BenchmarkSign(b *testing.B) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	sk := &keys.SigningKey{KID: "k1-bench", Private: priv, Public: &priv.PublicKey}
	payload := []byte(`{"iss":"https://demo.example","sub":"u_0123456789","aud":"https://demo.example","client_id":"c_0123456789abcdef","scope":"openid profile email account:read","jti":"0123456789abcdef0123456789","iat":1764000000,"exp":1764000900,"grant_id":"g_0123456789abcdef0123456789abcdef","auth_time":1764000000}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := sk.Sign(payload, "at+jwt"); err != nil {
			b.Fatal(err)
		}
	}
}
