package memberapi

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/storage/sqlstore"
	"github.com/lectern/lectern/storage/sqlstore/sqltest"
	"github.com/lectern/lectern/tenant"
)

// sqlRecorder is a slog handler that keeps the SQL statements sqlstore
// reports. Opened with SlowQuery of 1 ns, sqlstore reports every statement
// it sends through gorm as "slow sql" with its text (never its parameters):
// that is how this test counts real SQL statements without touching the
// store's code.
type sqlRecorder struct {
	mu    sync.Mutex
	stmts []string
}

func (r *sqlRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *sqlRecorder) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *sqlRecorder) WithGroup(string) slog.Handler            { return r }
func (r *sqlRecorder) Handle(_ context.Context, rec slog.Record) error {
	if rec.Message != "slow sql" && rec.Message != "sql failed" {
		return nil
	}
	rec.Attrs(func(a slog.Attr) bool {
		if a.Key == "sql" {
			r.mu.Lock()
			r.stmts = append(r.stmts, a.Value.String())
			r.mu.Unlock()
		}
		return true
	})
	return nil
}

func (r *sqlRecorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.stmts
	r.stmts = nil
	return s
}

// countingStore counts the Store calls the API makes, per method.
type countingStore struct {
	Store
	mu    sync.Mutex
	calls map[string]int
}

func (c *countingStore) inc(m string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls[m]++
}

func (c *countingStore) ListEnrollments(ctx context.Context, site tenant.ID, userID string, p storage.Page) ([]storage.EnrollmentView, int, error) {
	c.inc("ListEnrollments")
	return c.Store.ListEnrollments(ctx, site, userID, p)
}

func (c *countingStore) LastWatched(ctx context.Context, site tenant.ID, userID string, courseIDs []int64) (map[int64]storage.LectureProgress, error) {
	c.inc("LastWatched")
	return c.Store.LastWatched(ctx, site, userID, courseIDs)
}

func (c *countingStore) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.calls
	c.calls = map[string]int{}
	return out
}

// enrolledCourses(first: 100) with lastWatchedLecture costs the same
// number of SQL statements for 1 enrollment as for 100, on SQLite and on
// PostgreSQL: ListEnrollments (2 statements: the page and the count) and
// one LastWatched (1 statement for every course of the page). It counts
// both the Store calls (countingStore) and the SQL statements the store
// sent (sqlRecorder).
func TestMemberAPISQLStatementsConstantInPageSize(t *testing.T) {
	backends := map[string]func(t *testing.T) string{
		"sqlite":   func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "lectern.db") },
		"postgres": func(t *testing.T) string { return sqltest.PostgresSchemaURL(t) },
	}
	for _, name := range []string{"sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			rec := &sqlRecorder{}
			st, err := sqlstore.Open(ctx, backends[name](t), &sqlstore.Options{Logger: slog.New(rec), SlowQuery: time.Nanosecond})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			if _, err := st.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			const query = `{ viewer { enrolledCourses(first: 100) { totalCount nodes { slug lastWatchedLecture { lectureId positionSeconds } } } } }`
			var perSize []int
			for i, n := range []int{1, 100} {
				site, user := seedEnrollments(t, st, fmt.Sprint("count-", i), n)
				counting := &countingStore{Store: st, calls: map[string]int{}}
				h, err := New(Options{Store: counting, Verifier: siteAuth{site: site.ID, user: user}})
				if err != nil {
					t.Fatal(err)
				}
				api := &testAPI{t: t, h: withSite(h, site.Tenant())}
				rec.take()
				r := api.post("account:read", query, nil)
				stmts := rec.take()
				nodes, _ := path(r.Data, "viewer", "enrolledCourses", "nodes").([]any)
				if r.status != 200 || len(r.Errors) != 0 || len(nodes) != n || path(nodes[n-1], "lastWatchedLecture", "positionSeconds") != float64(n) {
					t.Fatalf("%d enrollments: %d %.300s", n, r.status, r.raw)
				}
				calls := counting.take()
				if calls["ListEnrollments"] != 1 || calls["LastWatched"] != 1 {
					t.Fatalf("%d enrollments: store calls %v; want ListEnrollments 1, LastWatched 1", n, calls)
				}
				t.Logf("%s, %d enrollments: store calls %v; %d SQL statements:\n  %s", name, n, calls, len(stmts), strings.Join(stmts, "\n  "))
				perSize = append(perSize, len(stmts))
			}
			// 1 for the caller's roles (the server reads them through the
			// cache) + 2 for ListEnrollments (page, count) + 1 for LastWatched.
			if perSize[0] != 4 || perSize[1] != 4 {
				t.Fatalf("SQL statements for 1 and 100 enrollments: %v; want 4 and 4", perSize)
			}
		})
	}
}

// seedEnrollments creates a site and a member enrolled in n courses, each
// with a lecture watched (position = the course's index).
func seedEnrollments(t *testing.T, st *sqlstore.Store, slug string, n int) (*storage.Site, string) {
	t.Helper()
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	site := &storage.Site{Slug: slug, Name: slug, Origin: "https://" + slug + ".example", Aliases: []string{},
		RegistrationVariant: tenant.VariantOpen, Settings: map[string]any{}, Locale: "en"}
	if err := st.CreateSite(ctx, site); err != nil {
		t.Fatal(err)
	}
	user := &storage.User{ID: "usr_" + strings.ReplaceAll(slug, "-", "_"), Email: slug + "@example.test", Name: "Member " + slug, CreatedAt: now, UpdatedAt: now}
	if err := st.CreateUser(ctx, user); err != nil {
		t.Fatal(err)
	}
	if err := st.GrantRole(ctx, site.ID, user.ID, storage.RoleStudent); err != nil {
		t.Fatal(err)
	}
	var rows []any
	courses := make([]*storage.Course, n)
	for i := range n {
		courses[i] = &storage.Course{SiteID: site.ID, Slug: fmt.Sprintf("course-%03d", i+1), Title: fmt.Sprint("Course ", i+1),
			Currency: "USD", Status: storage.StatusPublished, CreatedAt: now, UpdatedAt: now}
		rows = append(rows, courses[i])
	}
	if err := st.Load(ctx, rows...); err != nil {
		t.Fatal(err)
	}
	sections := make([]*storage.Section, n)
	rows = rows[:0]
	for i, c := range courses {
		sections[i] = &storage.Section{SiteID: site.ID, CourseID: c.ID, Title: "S"}
		rows = append(rows, sections[i])
	}
	if err := st.Load(ctx, rows...); err != nil {
		t.Fatal(err)
	}
	lectures := make([]*storage.Lecture, n)
	rows = rows[:0]
	for i, c := range courses {
		lectures[i] = &storage.Lecture{SiteID: site.ID, CourseID: c.ID, SectionID: sections[i].ID, Title: "L", Status: storage.StatusPublished}
		rows = append(rows, lectures[i])
	}
	if err := st.Load(ctx, rows...); err != nil {
		t.Fatal(err)
	}
	rows = rows[:0]
	for i, c := range courses {
		rows = append(rows,
			&storage.Enrollment{SiteID: site.ID, UserID: user.ID, CourseID: c.ID, EnrolledAt: now},
			&storage.LectureProgress{SiteID: site.ID, UserID: user.ID, CourseID: c.ID, LectureID: lectures[i].ID, PositionSeconds: i + 1, UpdatedAt: now})
	}
	if err := st.Load(ctx, rows...); err != nil {
		t.Fatal(err)
	}
	return site, user.ID
}
