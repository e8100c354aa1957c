package mcp

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lectern/lectern/authserver/bearer"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// fakeStore is an in-memory Store for one or two sites. down makes every
// read fail as an unreachable database does.
type fakeStore struct {
	mu            sync.Mutex
	courses       []storage.Course // published and drafts
	events        []storage.Event
	enrollments   map[string][]storage.EnrollmentView // by user
	notifications []storage.Notification
	roles         map[string][]string // user → roles (one site)
	down          bool
	calls         int
}

var errDown = errors.New("dial tcp 10.0.0.7:5432: connection refused (secret detail)")

func (f *fakeStore) check() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.down {
		return errors.Join(storage.ErrUnavailable, errDown)
	}
	return nil
}

func (f *fakeStore) published(site tenant.ID) []storage.Course {
	var out []storage.Course
	for _, c := range f.courses {
		if c.SiteID == site && c.Status == storage.StatusPublished {
			out = append(out, c)
		}
	}
	return out
}

func (f *fakeStore) SearchCourses(_ context.Context, site tenant.ID, q storage.CourseQuery) ([]storage.Course, int, error) {
	if err := f.check(); err != nil {
		return nil, 0, err
	}
	var match []storage.Course
	for _, c := range f.published(site) {
		if q.Text != "" && !strings.Contains(strings.ToLower(c.Title+" "+c.Subtitle+" "+c.Description), strings.ToLower(q.Text)) {
			continue
		}
		if q.Category != "" && !strings.EqualFold(c.Category, q.Category) {
			continue
		}
		match = append(match, c)
	}
	var page []storage.Course
	for _, c := range match {
		if c.ID > q.After && len(page) < q.Limit {
			page = append(page, c)
		}
	}
	return page, len(match), nil
}

func (f *fakeStore) CourseBySlug(_ context.Context, site tenant.ID, slug string) (*storage.CourseDetail, error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	for _, c := range f.published(site) {
		if c.Slug == slug {
			return &storage.CourseDetail{Course: c, Sections: []storage.SectionOutline{{
				Section:  storage.Section{Title: "Only section"},
				Lectures: []storage.Lecture{{ID: c.ID * 10, Title: "Lecture of " + c.Title, DurationSeconds: 600}},
			}}}, nil
		}
	}
	return nil, storage.ErrNotFound
}

func (f *fakeStore) ListUpcomingEvents(_ context.Context, site tenant.ID, from time.Time, p storage.Page) ([]storage.Event, int, error) {
	if err := f.check(); err != nil {
		return nil, 0, err
	}
	var out []storage.Event
	for _, e := range f.events {
		if e.SiteID == site && e.Public && e.StartsAt.After(from) {
			out = append(out, e)
		}
	}
	return out, len(out), nil
}

func (f *fakeStore) Offerings(_ context.Context, site tenant.ID, now time.Time) (*storage.Offerings, error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	evs, _, _ := f.ListUpcomingEvents(context.Background(), site, now, storage.Page{})
	return &storage.Offerings{Courses: f.published(site), Events: evs}, nil
}

func (f *fakeStore) Categories(_ context.Context, site tenant.ID) ([]string, error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	var out []string
	for _, c := range f.published(site) {
		if !slices.Contains(out, c.Category) {
			out = append(out, c.Category)
		}
	}
	slices.Sort(out)
	return out, nil
}

func (f *fakeStore) ListEnrollments(_ context.Context, _ tenant.ID, user string, p storage.Page) ([]storage.EnrollmentView, int, error) {
	if err := f.check(); err != nil {
		return nil, 0, err
	}
	all := f.enrollments[user]
	var out []storage.EnrollmentView
	for _, e := range all {
		if e.ID > p.After && len(out) < p.Limit {
			out = append(out, e)
		}
	}
	return out, len(all), nil
}

func (f *fakeStore) LastWatched(context.Context, tenant.ID, string, []int64) (map[int64]storage.LectureProgress, error) {
	return map[int64]storage.LectureProgress{}, f.check()
}

func (f *fakeStore) CourseProgress(context.Context, tenant.ID, string, int64) ([]storage.LectureProgress, error) {
	return nil, f.check()
}

func (f *fakeStore) ListProductPurchases(context.Context, tenant.ID, string, storage.Page) ([]storage.ProductPurchaseView, int, error) {
	return nil, 0, f.check()
}

func (f *fakeStore) ListConsultingPurchases(context.Context, tenant.ID, string, storage.Page) ([]storage.ConsultingPurchaseView, int, error) {
	return nil, 0, f.check()
}

func (f *fakeStore) ListEventRegistrations(context.Context, tenant.ID, string, storage.Page) ([]storage.EventRegistrationView, int, error) {
	return nil, 0, f.check()
}

func (f *fakeStore) ListNotifications(_ context.Context, site tenant.ID, user string, p storage.Page, unreadOnly bool) ([]storage.Notification, int, error) {
	if err := f.check(); err != nil {
		return nil, 0, err
	}
	var out []storage.Notification
	for _, n := range f.notifications {
		if n.SiteID == site && n.UserID == user && (!unreadOnly || n.ReadAt == nil) {
			out = append(out, n)
		}
	}
	return out, len(out), nil
}

func (f *fakeStore) UnreadNotificationCount(_ context.Context, site tenant.ID, user string) (int, error) {
	n, _, err := f.ListNotifications(context.Background(), site, user, storage.Page{}, true)
	return len(n), err
}

func (f *fakeStore) MarkNotificationRead(_ context.Context, site tenant.ID, user string, id int64, at time.Time) (*storage.Notification, error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.notifications {
		n := &f.notifications[i]
		if n.SiteID == site && n.UserID == user && n.ID == id {
			if n.ReadAt == nil {
				n.ReadAt = &at
			}
			c := *n
			return &c, nil
		}
	}
	return nil, storage.ErrNotFound
}

func (f *fakeStore) ListCourses(_ context.Context, site tenant.ID, drafts bool, p storage.Page) ([]storage.Course, int, error) {
	if err := f.check(); err != nil {
		return nil, 0, err
	}
	var all []storage.Course
	for _, c := range f.courses {
		if c.SiteID == site && (drafts || c.Status == storage.StatusPublished) {
			all = append(all, c)
		}
	}
	var out []storage.Course
	for _, c := range all {
		if c.ID > p.After && len(out) < p.Limit {
			out = append(out, c)
		}
	}
	return out, len(all), nil
}

func (f *fakeStore) ListStudents(context.Context, tenant.ID, string, storage.Page) ([]storage.StudentView, int, error) {
	return nil, 0, f.check()
}

func (f *fakeStore) RecentOrders(context.Context, tenant.ID, storage.Page) ([]storage.OrderView, int, error) {
	return nil, 0, f.check()
}

func (f *fakeStore) SalesSummary(_ context.Context, _ tenant.ID, from, to time.Time) (*storage.SalesSummary, error) {
	return &storage.SalesSummary{From: from, To: to}, f.check()
}

func (f *fakeStore) RolesAt(_ context.Context, _ tenant.ID, user string) ([]string, error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.roles[user]), nil
}

// fakeAuth knows a few tokens: "Bearer <name>".
type fakeAuth map[string]*bearer.Token

func (a fakeAuth) Authenticate(r *http.Request) (*bearer.Token, error) {
	raw, err := bearer.TokenFromHeader(r.Header)
	if err != nil {
		return nil, err
	}
	if t, ok := a[raw]; ok {
		return t, nil
	}
	return nil, bearer.InvalidToken("the access token is invalid")
}
