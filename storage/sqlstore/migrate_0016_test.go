package sqlstore_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/storage/sqlstore"
)

// A database at 0015 holding grants of two people at two sites migrates to
// one (user_id, site_id) index in place of grants_site_user and
// grants_user_live, and every question about a person's grants gets the
// same answer as before; on PostgreSQL the new index answers the
// every-site question (UserGrants) on its own.
func TestMigrateGrantsUserIndex(t *testing.T) {
	cases := []struct {
		name, dialect string
		prepare       func(t *testing.T, s *sqlstore.Store) // before migrating to 0016
	}{
		{name: "sqlite", dialect: sqlstore.SQLite},
		{name: "postgres", dialect: sqlstore.Postgres},
		// The operator built the index beforehand: it is kept, not built
		// again.
		{name: "postgres/index-built-beforehand", dialect: sqlstore.Postgres, prepare: func(t *testing.T, s *sqlstore.Store) {
			exec(t, s, "CREATE INDEX CONCURRENTLY grants_user_site ON grants (user_id, site_id)")
		}},
		// A concurrent build that failed leaves an invalid index behind
		// (here one whose expression fails on every row): it is replaced.
		{name: "postgres/invalid-index-left-beforehand", dialect: sqlstore.Postgres, prepare: func(t *testing.T, s *sqlstore.Store) {
			if _, err := sqlstore.SQLDB(s).ExecContext(context.Background(), "CREATE INDEX CONCURRENTLY grants_user_site ON grants ((1 / (length(user_id) - length(user_id))))"); err == nil {
				t.Fatal("an index whose expression divides by zero was built")
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			url := emptyDatabases()[tc.dialect](t)
			s := open(t, url)
			migrateTo(t, s, 15)

			now := time.Now().UTC().Truncate(time.Millisecond)
			var sites []*storage.Site
			for _, slug := range []string{"a", "b"} {
				site := &storage.Site{Slug: slug, Name: slug, Origin: "https://" + slug + ".test", RegistrationVariant: "B"}
				if err := s.CreateSite(ctx, site); err != nil {
					t.Fatal(err)
				}
				sites = append(sites, site)
			}
			var users []*storage.User
			for _, id := range []string{"usr_m", "usr_n"} {
				u := &storage.User{ID: id, Email: id + "@example.test", Name: id}
				if err := s.CreateUser(ctx, u); err != nil {
					t.Fatal(err)
				}
				users = append(users, u)
			}
			n := 0
			grant := func(site *storage.Site, u *storage.User, revoked bool) {
				n++
				at := now.Add(time.Duration(n) * time.Second)
				g := &storage.Grant{ID: fmt.Sprintf("grt_%d", n), SiteID: site.ID, ClientID: "app", UserID: u.ID, Scopes: []string{"openid"},
					Resource: site.Origin, AuthTime: at, CreatedAt: at, ExpiresAt: at.Add(90 * 24 * time.Hour), LastUsedAt: at}
				if err := s.CreateGrant(ctx, g, &storage.RefreshToken{TokenHash: randomHash(), CreatedAt: at, ExpiresAt: at.Add(30 * 24 * time.Hour)}); err != nil {
					t.Fatal(err)
				}
				if revoked {
					if _, err := s.RevokeGrant(ctx, site.ID, g.ID, at); err != nil {
						t.Fatal(err)
					}
				}
			}
			for _, site := range sites {
				for _, u := range users {
					grant(site, u, false)
					grant(site, u, false)
					grant(site, u, true)
				}
			}
			if tc.prepare != nil {
				tc.prepare(t, s)
			}
			var builtBefore int64
			if tc.name == "postgres/index-built-beforehand" {
				builtBefore = relfilenode(t, s, "grants_user_site")
			}
			answers := func() map[string][]string {
				out := map[string][]string{}
				ids := func(gs []storage.Grant) []string {
					var r []string
					for _, g := range gs {
						r = append(r, g.ID)
					}
					return r
				}
				for _, u := range users {
					gs, err := s.UserGrants(ctx, u.ID, now)
					if err != nil {
						t.Fatal(err)
					}
					out["UserGrants "+u.ID] = ids(gs)
					for _, site := range sites {
						for _, all := range []bool{true, false} {
							gs, err := s.ListGrants(ctx, site.ID, u.ID, all)
							if err != nil {
								t.Fatal(err)
							}
							out[fmt.Sprintf("ListGrants %s %s revoked=%v", site.Slug, u.ID, all)] = ids(gs)
						}
						gs, total, err := s.LiveGrants(ctx, site.ID, storage.GrantQuery{At: now, UserID: u.ID})
						if err != nil {
							t.Fatal(err)
						}
						out[fmt.Sprintf("LiveGrants %s %s (%d)", site.Slug, u.ID, total)] = ids(gs)
					}
				}
				return out
			}
			before := answers()
			if got := before["UserGrants usr_m"]; len(got) != 4 {
				t.Fatalf("UserGrants before the migration: %v; want usr_m's 4 live grants", got)
			}

			s.Close()
			s = open(t, url)
			applied, err := s.Migrate(ctx) // checks the schema afterwards
			if err != nil {
				t.Fatal(err)
			}
			if len(applied) == 0 || applied[0] != "0016_grants_user_index" {
				t.Fatalf("Migrate applied %v; want 0016 first", applied)
			}
			if diff := cmp.Diff(before, answers()); diff != "" {
				t.Errorf("answers about a person's grants changed with the migration (-before +after):\n%s", diff)
			}
			indexes := grantIndexes(t, s)
			for _, gone := range []string{"grants_site_user", "grants_user_live"} {
				if strings.Contains(indexes, gone) {
					t.Errorf("%s is still there: %s", gone, indexes)
				}
			}
			if !strings.Contains(indexes, "grants_user_site") {
				t.Fatalf("no grants_user_site after the migration: %s", indexes)
			}
			if tc.dialect != sqlstore.Postgres {
				return
			}
			var valid bool
			if err := sqlstore.SQLDB(s).QueryRowContext(ctx, "SELECT indisvalid FROM pg_index WHERE indexrelid = 'grants_user_site'::regclass").Scan(&valid); err != nil || !valid {
				t.Errorf("grants_user_site valid = %v, %v", valid, err)
			}
			if builtBefore != 0 && relfilenode(t, s, "grants_user_site") != builtBefore {
				t.Error("the index built beforehand was built again")
			}
			// The every-site question finds the person's grants through the
			// index's leading column (sequential scans off: the table is
			// small enough for the planner to prefer one).
			conn, err := sqlstore.SQLDB(s).Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := conn.ExecContext(ctx, "SET enable_seqscan = off"); err != nil {
				t.Fatal(err)
			}
			rows, err := conn.QueryContext(ctx, "EXPLAIN SELECT * FROM grants WHERE user_id = 'usr_m' AND revoked_at IS NULL AND expires_at > now() ORDER BY site_id, id")
			if err != nil {
				t.Fatal(err)
			}
			plan := strings.Join(scanStrings(t, rows), "\n")
			if !strings.Contains(plan, "grants_user_site") || strings.Contains(plan, "Full") {
				t.Errorf("UserGrants is not planned on grants_user_site:\n%s", plan)
			}
		})
	}
}

// grantIndexes lists the names of the grants table's indexes.
func grantIndexes(t *testing.T, s *sqlstore.Store) string {
	t.Helper()
	q := "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'grants'"
	if s.Dialect() == sqlstore.Postgres {
		q = "SELECT indexname FROM pg_indexes WHERE tablename = 'grants' AND schemaname = current_schema()"
	}
	rows, err := sqlstore.SQLDB(s).QueryContext(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(scanStrings(t, rows), ", ")
}

// scanStrings reads rows of one text column and closes them.
func scanStrings(t *testing.T, rows *sql.Rows) []string {
	t.Helper()
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
