package sqlstore

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/storage/storagetest"
)

// pgStore opens a migrated store on a schema of the test's own. (An
// internal test cannot use sqltest, which imports this package.)
func pgStore(t testing.TB) *Store {
	t.Helper()
	base := storagetest.PostgresURL(t)
	schema := fmt.Sprintf("lectern_batch_%d", time.Now().UnixNano())
	admin, err := Open(context.Background(), base, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := admin.Exec(context.Background(), "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE"); admin.Close() })
	u, _ := url.Parse(base)
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	s, err := Open(context.Background(), u.String(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

func hash32() []byte {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	s := sha256.Sum256(b)
	return s[:]
}

func TestBatchedRotation(t *testing.T) {
	s := pgStore(t)
	ctx := context.Background()
	site := &storage.Site{Slug: "s", Name: "S", Origin: "https://s.test", RegistrationVariant: "B"}
	if err := s.CreateSite(ctx, site); err != nil {
		t.Fatal(err)
	}
	u := &storage.User{ID: "usr_batch", Email: "b@x.test", Name: "B"}
	if err := s.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	mkGrant := func(id string, revoked bool, tokenExpiry time.Time) []byte {
		g := &storage.Grant{ID: id, SiteID: site.ID, ClientID: "c", UserID: u.ID, Scopes: []string{"openid"}, Resource: site.Origin,
			AuthTime: now, CreatedAt: now, ExpiresAt: now.Add(90 * 24 * time.Hour), LastUsedAt: now}
		h := hash32()
		if err := s.createGrantPG(ctx, g, &storage.RefreshToken{SiteID: site.ID, GrantID: id, TokenHash: h, CreatedAt: now, ExpiresAt: tokenExpiry}, nil); err != nil {
			t.Fatal(err)
		}
		if revoked {
			if _, err := s.RevokeGrant(ctx, site.ID, id, now); err != nil {
				t.Fatal(err)
			}
		}
		return h
	}
	live := now.Add(time.Hour)
	h1, h2, h3 := mkGrant("grt_1", false, live), mkGrant("grt_2", false, live), mkGrant("grt_3", false, live)
	hRevoked := mkGrant("grt_revoked", true, live)
	hExpired := mkGrant("grt_expired", false, now.Add(-time.Minute))

	call := func(old []byte) *batchCall[rotateReq, rotateRes] {
		return &batchCall[rotateReq, rotateRes]{req: rotateReq{site: site.ID, oldHash: old, now: now,
			next: &storage.RefreshToken{TokenHash: hash32(), CreatedAt: now, ExpiresAt: now.Add(30 * 24 * time.Hour)}}}
	}
	calls := []*batchCall[rotateReq, rotateRes]{call(h1), call(h2), call(h3), call(h3), call(hRevoked), call(hExpired)}
	s.rotateBatch(ctx, calls)

	for i, want := range []string{"grt_1", "grt_2"} {
		if calls[i].err != nil || calls[i].res == nil || calls[i].res.ID != want {
			t.Fatalf("call %d: %+v %v; want rotated %s", i, calls[i].res, calls[i].err, want)
		}
		rt, g, err := s.RefreshTokenByHash(ctx, site.ID, calls[i].req.next.TokenHash)
		if err != nil || g.ID != want || string(rt.ParentHash) != string(calls[i].req.oldHash) {
			t.Fatalf("next token of call %d: %+v %+v %v", i, rt, g, err)
		}
	}
	// The same token twice in one batch: exactly one rotation.
	if won := (calls[2].res != nil) != (calls[3].res != nil); !won {
		t.Fatalf("duplicate token: results %v and %v; want exactly one rotation", calls[2].res, calls[3].res)
	}
	loser := calls[2]
	if calls[2].res != nil {
		loser = calls[3]
	}
	if _, _, err := s.RefreshTokenByHash(ctx, site.ID, loser.req.next.TokenHash); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("the losing duplicate's token was stored: %v", err)
	}
	if calls[4].res != nil || calls[5].res != nil || calls[4].err != nil || calls[5].err != nil {
		t.Fatalf("revoked/expired: %+v %v / %+v %v; want not rotated, no error", calls[4].res, calls[4].err, calls[5].res, calls[5].err)
	}
	// Through the public method, the loser now sees reuse.
	_, err := s.RotateRefreshToken(ctx, site.ID, loser.req.oldHash, &storage.RefreshToken{TokenHash: hash32(), CreatedAt: now, ExpiresAt: now.Add(time.Hour)}, now)
	if !errors.Is(err, storage.ErrRefreshReused) {
		t.Fatalf("presenting the duplicate again: %v; want ErrRefreshReused", err)
	}
}

func TestBatchedGrantCreation(t *testing.T) {
	s := pgStore(t)
	ctx := context.Background()
	site := &storage.Site{Slug: "s", Name: "S", Origin: "https://s.test", RegistrationVariant: "B"}
	if err := s.CreateSite(ctx, site); err != nil {
		t.Fatal(err)
	}
	u := &storage.User{ID: "usr_batch", Email: "b@x.test", Name: "B"}
	if err := s.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	call := func(id string) *batchCall[grantReq, struct{}] {
		return &batchCall[grantReq, struct{}]{req: grantReq{
			g: &storage.Grant{ID: id, SiteID: site.ID, ClientID: "c", UserID: u.ID, Scopes: []string{"openid"}, Resource: site.Origin,
				AuthTime: now, CreatedAt: now, ExpiresAt: now.Add(time.Hour), LastUsedAt: now},
			rt:    &storage.RefreshToken{SiteID: site.ID, GrantID: id, TokenHash: hash32(), CreatedAt: now, ExpiresAt: now.Add(time.Hour)},
			audit: []*storage.AuditEvent{{SiteID: site.ID, Actor: u.ID, Action: "grant.created", Target: id, Details: map[string]any{}, CreatedAt: now}},
		}}
	}
	first := []*batchCall[grantReq, struct{}]{call("grt_a"), call("grt_b"), call("grt_c")}
	s.createGrantsBatch(ctx, first)
	for _, c := range first {
		if c.err != nil {
			t.Fatal(c.err)
		}
		if _, g, err := s.RefreshTokenByHash(ctx, site.ID, c.req.rt.TokenHash); err != nil || g.ID != c.req.g.ID {
			t.Fatalf("grant %s: %v", c.req.g.ID, err)
		}
	}
	if events, _ := s.ListAudit(ctx, site.ID, 0, 10); len(events) != 3 {
		t.Fatalf("%d audit events; want 3", len(events))
	}
	// One taken ID fails that call only.
	second := []*batchCall[grantReq, struct{}]{call("grt_d"), call("grt_a"), call("grt_e")}
	s.createGrantsBatch(ctx, second)
	if second[0].err != nil || second[2].err != nil {
		t.Fatalf("innocent calls failed: %v, %v", second[0].err, second[2].err)
	}
	if !errors.Is(mapErr(second[1].err), storage.ErrConflict) {
		t.Fatalf("taken ID: %v; want a conflict", second[1].err)
	}
	if events, _ := s.ListAudit(ctx, site.ID, 0, 10); len(events) != 5 {
		t.Fatalf("%d audit events; want 5 (the failed call recorded none)", len(events))
	}
}

// The batched rotation is planned once per connection (generic plans). On
// the key pool it looks each requested token up by its index (a nested
// loop) even when the plan is made on an empty table, as on a new database;
// on a session with the default planner settings the same generic plan hash
// joins a sequential scan of the whole table, and kept doing so on every
// rotation while the table grew.
func TestKeyPoolPlansIndexLookupsOnSmallTables(t *testing.T) {
	s := pgStore(t)
	ctx := context.Background()
	plan := func(db interface {
		Conn(context.Context) (*sql.Conn, error)
	}) string {
		t.Helper()
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.ExecContext(ctx, "PREPARE rotate_plan(bigint[], bytea[], bytea[], timestamptz[], timestamptz[]) AS "+rotateBatchSQL); err != nil {
			t.Fatal(err)
		}
		defer c.ExecContext(ctx, "DEALLOCATE rotate_plan")
		rows, err := c.QueryContext(ctx, "EXPLAIN EXECUTE rotate_plan('{1}', '{\\x00}', '{\\x01}', '{2026-01-01}', '{2026-02-01}')")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out strings.Builder
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				t.Fatal(err)
			}
			out.WriteString(line + "\n")
		}
		return out.String()
	}
	key := plan(s.keyDB)
	t.Logf("key pool:\n%s", key)
	if strings.Contains(key, "Seq Scan on refresh_tokens") || strings.Contains(key, "Hash Join") || !strings.Contains(key, "Index Cond: (token_hash = r.old_hash)") {
		t.Fatalf("the key pool's generic plan of the batched rotation on an empty table does not look the token up by its index:\n%s", key)
	}
	if general := plan(s.sqlDB); !strings.Contains(general, "Seq Scan on refresh_tokens") {
		t.Logf("note: the general pool planned an index lookup on an empty table too:\n%s", general)
	}
}
