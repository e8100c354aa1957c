package sqlstore_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/database"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/storage/sqlstore"
)

// migrateTo applies the dialect's migrations up to version, as a binary of
// that version did.
func migrateTo(t *testing.T, s *sqlstore.Store, version int) {
	t.Helper()
	migs, err := sqlstore.Migrations(s.Dialect())
	if err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{}
	for _, m := range migs {
		if m.Version <= version {
			fsys[fmt.Sprintf("%04d_%s.sql", m.Version, m.Name)] = &fstest.MapFile{Data: []byte(m.SQL)}
		}
	}
	dialect := database.DialectSQLite3
	if s.Dialect() == sqlstore.Postgres {
		dialect = database.DialectPostgres
	}
	p, err := goose.NewProvider(dialect, sqlstore.SQLDB(s), fsys, goose.WithDisableGlobalRegistry(true), goose.WithLogger(goose.NopLogger()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Up(context.Background()); err != nil {
		t.Fatal(err)
	}
	if v, err := s.SchemaVersion(context.Background()); err != nil || v != version {
		t.Fatalf("SchemaVersion after migrating to %d: %d, %v", version, v, err)
	}
}

// A database holding refresh tokens (live chains, a grant revoked by the
// RevokeGrant before 0015, which also marked its tokens) migrates to
// refresh_tokens keyed by token_hash with every token intact: the live
// ones rotate, a used one trips reuse detection, the revoked grant's stay
// revoked.
func TestMigrateRefreshTokensToHashKey(t *testing.T) {
	cases := []struct {
		name, dialect string
		prepare       func(t *testing.T, s *sqlstore.Store) // before migrating to 0015
	}{
		{name: "sqlite", dialect: sqlstore.SQLite},
		{name: "postgres", dialect: sqlstore.Postgres},
		// The operator built the key's index beforehand: it is promoted,
		// not built again.
		{name: "postgres/index-built-beforehand", dialect: sqlstore.Postgres, prepare: func(t *testing.T, s *sqlstore.Store) {
			exec(t, s, "CREATE UNIQUE INDEX CONCURRENTLY refresh_tokens_hash_pkey ON refresh_tokens (token_hash)")
		}},
		// A concurrent build that failed leaves an invalid index behind
		// (here on another column, where it failed on duplicates): it is
		// replaced.
		{name: "postgres/invalid-index-left-beforehand", dialect: sqlstore.Postgres, prepare: func(t *testing.T, s *sqlstore.Store) {
			if _, err := sqlstore.SQLDB(s).ExecContext(context.Background(), "CREATE UNIQUE INDEX CONCURRENTLY refresh_tokens_hash_pkey ON refresh_tokens (site_id)"); err == nil {
				t.Fatal("a unique index on duplicates was built")
			}
			var valid bool
			if err := sqlstore.SQLDB(s).QueryRowContext(context.Background(), "SELECT indisvalid FROM pg_index WHERE indexrelid = 'refresh_tokens_hash_pkey'::regclass").Scan(&valid); err != nil || valid {
				t.Fatalf("the failed build left no invalid index: valid %v, %v", valid, err)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			url := emptyDatabases()[tc.dialect](t)
			s := open(t, url)
			migrateTo(t, s, 14)

			now := time.Now().UTC().Truncate(time.Millisecond)
			site := &storage.Site{Slug: "a", Name: "A", Origin: "https://a.test", RegistrationVariant: "B"}
			if err := s.CreateSite(ctx, site); err != nil {
				t.Fatal(err)
			}
			u := &storage.User{ID: "usr_m", Email: "m@example.test", Name: "M"}
			if err := s.CreateUser(ctx, u); err != nil {
				t.Fatal(err)
			}
			grant := func(id string) []byte {
				h := randomHash()
				g := &storage.Grant{ID: id, SiteID: site.ID, ClientID: "app", UserID: u.ID, Scopes: []string{"openid"}, Resource: site.Origin,
					AuthTime: now, CreatedAt: now, ExpiresAt: now.Add(90 * 24 * time.Hour), LastUsedAt: now}
				if err := s.CreateGrant(ctx, g, &storage.RefreshToken{TokenHash: h, CreatedAt: now, ExpiresAt: now.Add(30 * 24 * time.Hour)}); err != nil {
					t.Fatal(err)
				}
				return h
			}
			rotate := func(h []byte, at time.Time) ([]byte, error) {
				next := randomHash()
				_, err := s.RotateRefreshToken(ctx, site.ID, h, &storage.RefreshToken{TokenHash: next, CreatedAt: at, ExpiresAt: at.Add(30 * 24 * time.Hour)}, at)
				return next, err
			}
			// A live chain: used, then current.
			used := grant("grt_live")
			current, err := rotate(used, now.Add(time.Second))
			if err != nil {
				t.Fatal(err)
			}
			// A grant revoked as before 0015: grant and tokens marked.
			revokedUsed := grant("grt_revoked")
			revokedCurrent, err := rotate(revokedUsed, now.Add(time.Second))
			if err != nil {
				t.Fatal(err)
			}
			revokedAt := now.Add(2 * time.Second)
			for _, q := range []string{"UPDATE grants SET revoked_at = $1 WHERE id = 'grt_revoked'", "UPDATE refresh_tokens SET revoked_at = $1 WHERE grant_id = 'grt_revoked'"} {
				if _, err := sqlstore.SQLDB(s).ExecContext(ctx, rebind(s, q), revokedAt); err != nil {
					t.Fatal(err)
				}
			}
			// And more chains, for the copy.
			var others [][]byte
			for i := range 50 {
				others = append(others, grant(fmt.Sprintf("grt_%d", i)))
			}
			before := map[string]*storage.RefreshToken{}
			for _, h := range append([][]byte{used, current, revokedUsed, revokedCurrent}, others...) {
				rt, _, err := s.RefreshTokenByHash(ctx, site.ID, h)
				if err != nil {
					t.Fatal(err)
				}
				before[string(h)] = rt
			}
			if tc.prepare != nil {
				tc.prepare(t, s)
			}
			var builtBefore int64
			if tc.name == "postgres/index-built-beforehand" {
				builtBefore = relfilenode(t, s, "refresh_tokens_hash_pkey")
			}

			// The new binary migrates and serves. (A process that ran
			// statements on the table before it changed gets one error per
			// connection and statement from pgx's statement cache:
			// "cached plan must not change result type".)
			s.Close()
			s = open(t, url)
			applied, err := s.Migrate(ctx) // checks the schema afterwards
			if err != nil {
				t.Fatal(err)
			}
			if len(applied) == 0 || applied[0] != "0015_refresh_tokens_by_hash" {
				t.Fatalf("Migrate applied %v; want 0015 first", applied)
			}

			// Every token came across unchanged.
			var n int
			if err := sqlstore.SQLDB(s).QueryRowContext(ctx, "SELECT count(*) FROM refresh_tokens").Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n != len(before) {
				t.Errorf("%d refresh tokens after the migration; %d before", n, len(before))
			}
			for h, want := range before {
				got, _, err := s.RefreshTokenByHash(ctx, site.ID, []byte(h))
				if err != nil {
					t.Fatalf("RefreshTokenByHash after the migration: %v", err)
				}
				if d := cmp.Diff(want, got, cmpopts.EquateApproxTime(time.Millisecond)); d != "" {
					t.Errorf("token changed by the migration (-before +after):\n%s", d)
				}
			}

			// The live chain goes on; the revoked grant's token does not.
			next, err := rotate(current, now.Add(time.Minute))
			if err != nil {
				t.Fatalf("rotating a live token after the migration: %v", err)
			}
			if _, err := rotate(next, now.Add(2*time.Minute)); err != nil {
				t.Fatalf("rotating the token issued after the migration: %v", err)
			}
			for _, h := range others {
				if _, err := rotate(h, now.Add(time.Minute)); err != nil {
					t.Fatalf("rotating another live token after the migration: %v", err)
				}
			}
			if _, err := rotate(revokedCurrent, now.Add(time.Minute)); !errors.Is(err, storage.ErrNotFound) {
				t.Errorf("rotating a token of a grant revoked before the migration: %v; want ErrNotFound", err)
			}
			// Presenting the used token is reuse: the grant is revoked, and
			// its current token reads as revoked too.
			if _, err := rotate(used, now.Add(3*time.Minute)); !errors.Is(err, storage.ErrRefreshReused) {
				t.Fatalf("presenting a token used before the migration: %v; want ErrRefreshReused", err)
			}
			if rt, g, err := s.RefreshTokenByHash(ctx, site.ID, next); err != nil || g.RevokedAt == nil || rt.RevokedAt == nil {
				t.Errorf("after reuse: token %+v, grant %+v, %v; want both revoked", rt, g, err)
			}

			checkHashKeyedTable(t, s)
			if builtBefore != 0 {
				if got := relfilenode(t, s, "refresh_tokens_pkey"); got != builtBefore {
					t.Errorf("the primary key's index was built again (relfilenode %d; the one built beforehand was %d)", got, builtBefore)
				}
			}
		})
	}
}

// checkHashKeyedTable checks what CheckSchema does not: the table has no
// id and no grant_id index, and the per-dialect physical choices.
func checkHashKeyedTable(t *testing.T, s *sqlstore.Store) {
	t.Helper()
	ctx := context.Background()
	db := sqlstore.SQLDB(s)
	query := func(q string) []string {
		t.Helper()
		rows, err := db.QueryContext(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var v string
			if err := rows.Scan(&v); err != nil {
				t.Fatal(err)
			}
			out = append(out, v)
		}
		return out
	}
	if s.Dialect() == sqlstore.Postgres {
		// The previous release, still serving during a rolling upgrade,
		// inserts with RETURNING id: the column stays for one release.
		var id int64
		if err := db.QueryRowContext(ctx, `INSERT INTO refresh_tokens (site_id, grant_id, token_hash, created_at, expires_at)
			SELECT site_id, grant_id, '\xfeed'::bytea, now(), now() + interval '1 day' FROM refresh_tokens LIMIT 1 RETURNING id`).Scan(&id); err != nil || id == 0 {
			t.Errorf("an insert as the previous release writes it: id %d, %v", id, err)
		}
		want := []string{"refresh_tokens_pkey"}
		if got := query("SELECT indexname FROM pg_indexes WHERE tablename = 'refresh_tokens' AND schemaname = current_schema() ORDER BY 1"); !cmp.Equal(got, want) {
			t.Errorf("indexes of refresh_tokens: %v; want %v", got, want)
		}
		if got := query("SELECT unnest(reloptions) FROM pg_class WHERE oid = 'refresh_tokens'::regclass"); !cmp.Equal(got, []string{"fillfactor=70"}) {
			t.Errorf("refresh_tokens reloptions: %v; want fillfactor=70", got)
		}
		return
	}
	if got := query("SELECT sql FROM sqlite_master WHERE name = 'refresh_tokens'"); len(got) != 1 || !strings.Contains(got[0], "WITHOUT ROWID") {
		t.Errorf("refresh_tokens on SQLite: %v; want a WITHOUT ROWID table", got)
	}
	if got := query("SELECT name FROM pragma_index_list('refresh_tokens') WHERE origin <> 'pk'"); len(got) != 0 {
		t.Errorf("indexes of refresh_tokens besides its key: %v", got)
	}
	want := []string{"grants", "sites"}
	if got := query(`SELECT "table" FROM pragma_foreign_key_list('refresh_tokens') ORDER BY 1`); !cmp.Equal(got, want) {
		t.Errorf("foreign keys of refresh_tokens: %v; want %v", got, want)
	}
}

func relfilenode(t *testing.T, s *sqlstore.Store, index string) int64 {
	t.Helper()
	var n int64
	if err := sqlstore.SQLDB(s).QueryRowContext(context.Background(), "SELECT pg_relation_filenode(to_regclass($1))", index).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func exec(t *testing.T, s *sqlstore.Store, q string) {
	t.Helper()
	if _, err := sqlstore.SQLDB(s).ExecContext(context.Background(), q); err != nil {
		t.Fatal(err)
	}
}

func randomHash() []byte {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return b
}
