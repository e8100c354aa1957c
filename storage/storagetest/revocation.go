package storagetest

import (
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// testRevocationVersions: every revocation of a site — a grant, an access
// token, a reused refresh token — raises the site's version by one in its
// own transaction, and returns the version it committed; other sites keep
// theirs.
func testRevocationVersions(t *testing.T, f *fixture) {
	versions := func(sites ...tenant.ID) map[tenant.ID]int64 {
		t.Helper()
		v, err := f.s.RevocationVersions(f.ctx, sites)
		must(t, err, "RevocationVersions")
		return v
	}
	const unknown tenant.ID = 1 << 40
	if d := cmp.Diff(map[tenant.ID]int64{f.a.ID: 0, f.b.ID: 0}, versions(f.a.ID, f.b.ID, unknown)); d != "" {
		t.Fatalf("versions of new sites (-want +got):\n%s", d)
	}
	if got := versions(); len(got) != 0 {
		t.Fatalf("RevocationVersions() = %v; want none", got)
	}

	u := f.user(t, "u@example.test")
	g, _ := f.grant(t, f.a, u.ID, 90*day, 30*day)
	at := f.now.Add(time.Minute)
	v, err := f.s.RevokeGrant(f.ctx, f.a.ID, g.ID, at)
	if err != nil || v != 1 {
		t.Fatalf("RevokeGrant = %d, %v; want version 1", v, err)
	}
	v, err = f.s.RevokeToken(f.ctx, &storage.RevokedToken{SiteID: f.a.ID, JTI: "j1", ExpiresAt: at.Add(time.Hour), RevokedAt: at})
	if err != nil || v != 2 {
		t.Fatalf("RevokeToken = %d, %v; want version 2", v, err)
	}
	// Revoking again raises the version too: the caller's copy is written
	// under the version its call returned.
	if v, err = f.s.RevokeGrant(f.ctx, f.a.ID, g.ID, at); err != nil || v != 3 {
		t.Fatalf("RevokeGrant again = %d, %v; want version 3", v, err)
	}
	if _, err = f.s.RevokeGrant(f.ctx, f.a.ID, "missing", at); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("RevokeGrant(unknown) = %v; want ErrNotFound", err)
	}
	// A reused refresh token revokes its grant: a revocation like any other.
	g2, h2 := f.grant(t, f.a, u.ID, 90*day, 30*day)
	_, _, err = f.rotate(f.a.ID, h2, at, 30*day)
	must(t, err, "RotateRefreshToken")
	if _, _, err = f.rotate(f.a.ID, h2, at, 30*day); !errors.Is(err, storage.ErrRefreshReused) {
		t.Fatalf("second rotation of a token = %v; want ErrRefreshReused", err)
	}
	if f.grantByID(t, f.a.ID, g2.ID).RevokedAt == nil {
		t.Fatal("reuse did not revoke the grant")
	}

	if d := cmp.Diff(map[tenant.ID]int64{f.a.ID: 4, f.b.ID: 0}, versions(f.a.ID, f.b.ID)); d != "" {
		t.Fatalf("versions after four revocations at A (-want +got):\n%s", d)
	}

	// Concurrent revocations get distinct versions, and the site ends at
	// the last.
	const n = 8
	got := make([]int64, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			var err error
			got[i], err = f.s.RevokeToken(f.ctx, &storage.RevokedToken{SiteID: f.b.ID, JTI: "c" + string(rune('a'+i)), ExpiresAt: at.Add(time.Hour), RevokedAt: at})
			if err != nil {
				t.Errorf("RevokeToken %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	slices.Sort(got)
	for i, v := range got {
		if v != int64(i+1) {
			t.Fatalf("versions of %d concurrent revocations = %v; want 1..%d", n, got, n)
		}
	}
	if d := cmp.Diff(map[tenant.ID]int64{f.a.ID: 4, f.b.ID: n}, versions(f.a.ID, f.b.ID)); d != "" {
		t.Fatalf("versions after concurrent revocations at B (-want +got):\n%s", d)
	}
}
