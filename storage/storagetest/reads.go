package storagetest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// Loader inserts fixture rows; backends that run the read contracts
// provide it (sqlstore.Store.Load).
type Loader interface {
	Load(ctx context.Context, records ...any) error
}

// catalogFixture loads, at site A and site B, a small catalog and one
// member's data. It returns the member and A's rows by name.
type catalogFixture struct {
	*fixture
	member, other       *storage.User
	goCourse, secCourse *storage.Course
	draft               *storage.Course
	bCourse             *storage.Course
	lectures            []*storage.Lecture // of goCourse: l1, l2 (published), l3 (draft)
	notes               []*storage.Notification
	otherNote           *storage.Notification
}

func load(t *testing.T, f *fixture, records ...any) {
	t.Helper()
	l, ok := f.s.(Loader)
	if !ok {
		t.Fatal("the store under test provides no Load method for fixtures")
	}
	if err := l.Load(f.ctx, records...); err != nil {
		t.Fatalf("Load: %v", err)
	}
}

func newCatalogFixture(t *testing.T, f *fixture) *catalogFixture {
	t.Helper()
	c := &catalogFixture{fixture: f, member: f.user(t, "member@example.test"), other: f.user(t, "other@example.test")}
	a, b := f.a.ID, f.b.ID
	now := f.now.UTC()
	pub := storage.StatusPublished
	c.goCourse = &storage.Course{SiteID: a, Slug: "go", Title: "Go Basics", Description: "Concurrency for beginners", Category: "Programming", PriceCents: 4900, Currency: "USD", Status: pub, CreatedAt: now, UpdatedAt: now}
	c.secCourse = &storage.Course{SiteID: a, Slug: "security", Title: "Web Security", Description: "OAuth and 100% CSRF", Category: "Security", PriceCents: 7900, Currency: "USD", Status: pub, CreatedAt: now, UpdatedAt: now}
	c.draft = &storage.Course{SiteID: a, Slug: "secret-draft", Title: "Go Secrets", Description: "unpublished", Category: "Programming", Currency: "USD", Status: storage.StatusDraft, CreatedAt: now, UpdatedAt: now}
	c.bCourse = &storage.Course{SiteID: b, Slug: "go", Title: "Go at B", Category: "Programming", Currency: "EUR", Status: pub, CreatedAt: now, UpdatedAt: now}
	load(t, f, c.goCourse, c.secCourse, c.draft, c.bCourse)
	lect := &storage.Lecturer{SiteID: a, Slug: "maya", Name: "Maya", CreatedAt: now, UpdatedAt: now}
	load(t, f, lect)
	sec := &storage.Section{SiteID: a, CourseID: c.goCourse.ID, Title: "Start", Position: 0}
	load(t, f, &storage.CourseLecturer{SiteID: a, CourseID: c.goCourse.ID, LecturerID: lect.ID}, sec)
	for i, st := range []string{pub, pub, storage.StatusDraft} {
		l := &storage.Lecture{SiteID: a, CourseID: c.goCourse.ID, SectionID: sec.ID, Title: []string{"One", "Two", "Hidden"}[i], Position: i, Status: st}
		load(t, f, l)
		c.lectures = append(c.lectures, l)
	}
	exp := now.Add(24 * time.Hour)
	load(t, f,
		&storage.Enrollment{SiteID: a, UserID: c.member.ID, CourseID: c.goCourse.ID, EnrolledAt: now},
		&storage.Enrollment{SiteID: a, UserID: c.member.ID, CourseID: c.secCourse.ID, EnrolledAt: now, ExpiresAt: &exp},
		&storage.Enrollment{SiteID: a, UserID: c.other.ID, CourseID: c.goCourse.ID, EnrolledAt: now},
		&storage.Enrollment{SiteID: b, UserID: c.member.ID, CourseID: c.bCourse.ID, EnrolledAt: now},
		&storage.LectureProgress{SiteID: a, UserID: c.member.ID, CourseID: c.goCourse.ID, LectureID: c.lectures[0].ID, PositionSeconds: 100, UpdatedAt: now.Add(-time.Hour)},
		&storage.LectureProgress{SiteID: a, UserID: c.member.ID, CourseID: c.goCourse.ID, LectureID: c.lectures[1].ID, PositionSeconds: 42, UpdatedAt: now},
		&storage.LectureProgress{SiteID: a, UserID: c.other.ID, CourseID: c.goCourse.ID, LectureID: c.lectures[0].ID, PositionSeconds: 7, UpdatedAt: now.Add(time.Hour)},
	)
	for i := range 3 {
		n := &storage.Notification{SiteID: a, UserID: c.member.ID, Kind: "k", Title: "n" + string(rune('0'+i)), CreatedAt: now}
		if i == 0 {
			n.ReadAt = &now
		}
		load(t, f, n)
		c.notes = append(c.notes, n)
	}
	c.otherNote = &storage.Notification{SiteID: a, UserID: c.other.ID, Kind: "k", Title: "not yours", CreatedAt: now}
	load(t, f, c.otherNote,
		&storage.Event{SiteID: a, Slug: "soon", Title: "Soon", StartsAt: now.Add(48 * time.Hour), EndsAt: now.Add(49 * time.Hour), Currency: "USD", Public: true, Status: pub, CreatedAt: now, UpdatedAt: now},
		&storage.Event{SiteID: a, Slug: "sooner", Title: "Sooner", StartsAt: now.Add(24 * time.Hour), EndsAt: now.Add(25 * time.Hour), Currency: "USD", Public: true, Status: pub, CreatedAt: now, UpdatedAt: now},
		&storage.Event{SiteID: a, Slug: "past", Title: "Past", StartsAt: now.Add(-48 * time.Hour), EndsAt: now.Add(-47 * time.Hour), Currency: "USD", Public: true, Status: pub, CreatedAt: now, UpdatedAt: now},
		&storage.Event{SiteID: a, Slug: "staff", Title: "Staff", StartsAt: now.Add(24 * time.Hour), EndsAt: now.Add(25 * time.Hour), Currency: "USD", Public: false, Status: pub, CreatedAt: now, UpdatedAt: now},
		&storage.MembershipPlan{SiteID: a, Slug: "all", Title: "All", Interval: "month", Currency: "USD", Status: pub, CreatedAt: now, UpdatedAt: now},
		&storage.MembershipPlan{SiteID: a, Slug: "draft-plan", Title: "Draft", Interval: "year", Currency: "USD", Status: storage.StatusDraft, CreatedAt: now, UpdatedAt: now},
	)
	return c
}

func testMemberReads(t *testing.T, f *fixture) {
	c := newCatalogFixture(t, f)
	a := f.a.ID

	enr, total, err := f.s.ListEnrollments(f.ctx, a, c.member.ID, storage.Page{Limit: 1})
	must(t, err, "ListEnrollments")
	if total != 2 || len(enr) != 1 || enr[0].CourseSlug != "go" || enr[0].ExpiresAt != nil {
		t.Fatalf("first page %+v total %d; want go (lifetime) of 2", enr, total)
	}
	next, _, err := f.s.ListEnrollments(f.ctx, a, c.member.ID, storage.Page{After: enr[0].ID, Limit: 10})
	must(t, err, "ListEnrollments page 2")
	if len(next) != 1 || next[0].CourseSlug != "security" || next[0].ExpiresAt == nil {
		t.Fatalf("second page %+v; want security (expiring)", next)
	}
	if b, n, _ := f.s.ListEnrollments(f.ctx, f.b.ID, c.member.ID, storage.Page{}); n != 1 || b[0].CourseTitle != "Go at B" {
		t.Fatalf("B enrollments %+v; want only B's", b)
	}

	last, err := f.s.LastWatched(f.ctx, a, c.member.ID, []int64{c.goCourse.ID, c.secCourse.ID})
	must(t, err, "LastWatched")
	if got := last[c.goCourse.ID]; got.LectureID != c.lectures[1].ID || got.PositionSeconds != 42 {
		t.Fatalf("last watched %+v; want lecture Two at 42 s (the newest of the member's, not the other's)", got)
	}
	if _, ok := last[c.secCourse.ID]; ok {
		t.Fatal("a course without progress has a last watched lecture")
	}
	if other, _ := f.s.LastWatched(f.ctx, f.b.ID, c.member.ID, []int64{c.goCourse.ID}); len(other) != 0 {
		t.Fatal("site B sees A's progress")
	}
	prog, err := f.s.CourseProgress(f.ctx, a, c.member.ID, c.goCourse.ID)
	must(t, err, "CourseProgress")
	if len(prog) != 2 || prog[0].LectureID != c.lectures[1].ID || prog[1].LectureID != c.lectures[0].ID || prog[1].PositionSeconds != 100 {
		t.Fatalf("course progress %+v; want the member's two lectures, newest first (not the other's)", prog)
	}
	if none, _ := f.s.CourseProgress(f.ctx, a, c.member.ID, c.secCourse.ID); len(none) != 0 {
		t.Fatalf("progress in a course not started: %+v", none)
	}
	if other, _ := f.s.CourseProgress(f.ctx, f.b.ID, c.member.ID, c.goCourse.ID); len(other) != 0 {
		t.Fatal("site B sees A's course progress")
	}

	notes, total, err := f.s.ListNotifications(f.ctx, a, c.member.ID, storage.Page{Limit: 2}, false)
	must(t, err, "ListNotifications")
	if total != 3 || len(notes) != 2 || notes[0].ID != c.notes[2].ID {
		t.Fatalf("notifications %+v total %d; want newest first, 3 in all", notes, total)
	}
	older, _, _ := f.s.ListNotifications(f.ctx, a, c.member.ID, storage.Page{After: notes[1].ID}, false)
	if len(older) != 1 || older[0].ID != c.notes[0].ID {
		t.Fatalf("older page %+v", older)
	}
	if n, _ := f.s.UnreadNotificationCount(f.ctx, a, c.member.ID); n != 2 {
		t.Fatalf("unread %d; want 2", n)
	}
	if _, err := f.s.MarkNotificationRead(f.ctx, a, c.member.ID, c.otherNote.ID, f.now); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("marking another member's notification: %v; want ErrNotFound", err)
	}
	if _, err := f.s.MarkNotificationRead(f.ctx, f.b.ID, c.member.ID, c.notes[1].ID, f.now); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("marking through site B: %v; want ErrNotFound", err)
	}
	got, err := f.s.MarkNotificationRead(f.ctx, a, c.member.ID, c.notes[1].ID, f.now)
	must(t, err, "MarkNotificationRead")
	if got.ReadAt == nil {
		t.Fatal("not marked read")
	}
	n, err := f.s.MarkAllNotificationsRead(f.ctx, a, c.member.ID, f.now)
	must(t, err, "MarkAllNotificationsRead")
	if n != 1 {
		t.Fatalf("marked %d; want the 1 still unread", n)
	}
	if n, _ := f.s.UnreadNotificationCount(f.ctx, a, c.other.ID); n != 1 {
		t.Fatalf("the other member's unread count %d; want 1 (untouched)", n)
	}

	testNotificationSubscriptions(t, f, c)
}

// testNotificationSubscriptions: settings page by (topic, channel), belong
// to one member at one site, and change in place.
func testNotificationSubscriptions(t *testing.T, f *fixture, c *catalogFixture) {
	a := f.a.ID
	set := func(site tenant.ID, user, topic, channel string, on bool) {
		t.Helper()
		must(t, f.s.SetNotificationSubscription(f.ctx, &storage.NotificationSubscription{SiteID: site, UserID: user, Topic: topic, Channel: channel, Enabled: on}), "Set "+topic+"/"+channel)
	}
	set(a, c.member.ID, "news", "email", true)
	set(a, c.member.ID, "news", "email", false) // changes, does not add
	set(a, c.member.ID, "alerts", "push", true)
	set(a, c.member.ID, "news", "push", true)
	set(a, c.member.ID, "alerts", "email", true)
	set(a, c.other.ID, "aaa", "email", true)        // another member's
	set(f.b.ID, c.member.ID, "alerts", "sms", true) // the member's at site B

	key := func(s storage.NotificationSubscription) string { return s.Topic + "/" + s.Channel }
	var got []string
	p := storage.SubscriptionPage{Limit: 2}
	for page := 0; ; page++ {
		rows, total, err := f.s.ListNotificationSubscriptions(f.ctx, a, c.member.ID, p)
		must(t, err, "ListNotificationSubscriptions")
		if total != 4 {
			t.Fatalf("total %d; want the member's 4 settings at A", total)
		}
		if len(rows) > 2 || page > 3 {
			t.Fatalf("page %d has %d rows; want at most 2", page, len(rows))
		}
		for _, r := range rows {
			got = append(got, key(r))
			if r.Topic == "news" && r.Channel == "email" && r.Enabled {
				t.Fatal("news/email is enabled; the second Set should have turned it off")
			}
		}
		if len(rows) < 2 {
			break
		}
		p.AfterTopic, p.AfterChannel = rows[1].Topic, rows[1].Channel
	}
	want := []string{"alerts/email", "alerts/push", "news/email", "news/push"}
	if !slices.Equal(got, want) {
		t.Fatalf("pages %v; want %v (topic, then channel order, each once)", got, want)
	}
	if rows, n, err := f.s.ListNotificationSubscriptions(f.ctx, f.b.ID, c.member.ID, storage.SubscriptionPage{}); err != nil || n != 1 || len(rows) != 1 || key(rows[0]) != "alerts/sms" {
		t.Fatalf("site B settings %+v (%d, %v); want only B's alerts/sms", rows, n, err)
	}

	one, err := f.s.NotificationSubscription(f.ctx, a, c.member.ID, "news", "push")
	must(t, err, "NotificationSubscription")
	if !one.Enabled || one.SiteID != a || one.UserID != c.member.ID {
		t.Fatalf("news/push %+v", one)
	}
	for _, tc := range []struct {
		site                 tenant.ID
		user, topic, channel string
	}{
		{a, c.member.ID, "news", "sms"},       // no such setting
		{a, c.member.ID, "aaa", "email"},      // another member's
		{f.b.ID, c.member.ID, "news", "push"}, // the member's, but at A
	} {
		if _, err := f.s.NotificationSubscription(f.ctx, tc.site, tc.user, tc.topic, tc.channel); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("NotificationSubscription(%d, %s/%s): %v; want ErrNotFound", tc.site, tc.topic, tc.channel, err)
		}
	}
}

func testCatalogReads(t *testing.T, f *fixture) {
	c := newCatalogFixture(t, f)
	a := f.a.ID
	all, total, err := f.s.SearchCourses(f.ctx, a, storage.CourseQuery{})
	must(t, err, "SearchCourses")
	if total != 2 || len(all) != 2 {
		t.Fatalf("catalog %+v; want the 2 published courses, not the draft", all)
	}
	for _, tc := range []struct {
		q    storage.CourseQuery
		want []string
	}{
		{storage.CourseQuery{Text: "go"}, []string{"go"}},
		{storage.CourseQuery{Text: "CONCURRENCY"}, []string{"go"}},
		{storage.CourseQuery{Text: "100%"}, []string{"security"}},
		{storage.CourseQuery{Text: "%"}, []string{"security"}}, // a literal %, not a wildcard
		{storage.CourseQuery{Text: "_"}, nil},
		{storage.CourseQuery{Category: "security"}, []string{"security"}},
		{storage.CourseQuery{Text: "secrets"}, nil},
		// Text no course has matches none (no NUL cut, no encoding error).
		{storage.CourseQuery{Text: "\x00"}, nil},
		{storage.CourseQuery{Text: "go\x00"}, nil},
		{storage.CourseQuery{Category: "security\x00"}, nil},
		{storage.CourseQuery{Text: "\xff"}, nil},
	} {
		got, _, err := f.s.SearchCourses(f.ctx, a, tc.q)
		must(t, err, "SearchCourses")
		var slugs []string
		for _, g := range got {
			slugs = append(slugs, g.Slug)
		}
		diff(t, "search "+tc.q.Text+tc.q.Category, tc.want, slugs)
	}
	d, err := f.s.CourseBySlug(f.ctx, a, "go")
	must(t, err, "CourseBySlug")
	if len(d.Lecturers) != 1 || len(d.Sections) != 1 || len(d.Sections[0].Lectures) != 2 {
		t.Fatalf("detail %+v; want one lecturer and the two published lectures", d)
	}
	if _, err := f.s.CourseBySlug(f.ctx, a, "secret-draft"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("draft by slug: %v; want ErrNotFound", err)
	}
	if b, _ := f.s.CourseBySlug(f.ctx, f.b.ID, "go"); b == nil || b.Title != "Go at B" {
		t.Fatalf("B's go course %+v", b)
	}
	ev, total, err := f.s.ListUpcomingEvents(f.ctx, a, f.now, storage.Page{Limit: 1})
	must(t, err, "ListUpcomingEvents")
	if total != 2 || len(ev) != 1 || ev[0].Slug != "sooner" {
		t.Fatalf("events %+v total %d; want sooner first of the 2 public upcoming", ev, total)
	}
	ev2, _, _ := f.s.ListUpcomingEvents(f.ctx, a, f.now, storage.Page{After: ev[0].ID})
	if len(ev2) != 1 || ev2[0].Slug != "soon" {
		t.Fatalf("events page 2 %+v", ev2)
	}
	o, err := f.s.Offerings(f.ctx, a, f.now)
	must(t, err, "Offerings")
	if len(o.Courses) != 2 || len(o.MembershipPlans) != 1 || len(o.Events) != 2 {
		t.Fatalf("offerings: %d courses, %d plans, %d events; want 2, 1, 2", len(o.Courses), len(o.MembershipPlans), len(o.Events))
	}
	cats, _ := f.s.Categories(f.ctx, a)
	diff(t, "categories", []string{"Programming", "Security"}, cats)
	_ = c
}

func testOperatorReads(t *testing.T, f *fixture) {
	c := newCatalogFixture(t, f)
	a := f.a.ID
	courses, total, err := f.s.ListCourses(f.ctx, a, true, storage.Page{})
	must(t, err, "ListCourses")
	if total != 3 || len(courses) != 3 {
		t.Fatalf("operator courses %d; want 3 with the draft", total)
	}
	if _, n, _ := f.s.ListCourses(f.ctx, a, false, storage.Page{}); n != 2 {
		t.Fatalf("published courses %d; want 2", n)
	}
	must(t, f.s.GrantRole(f.ctx, a, c.member.ID, storage.RoleStudent), "GrantRole")
	must(t, f.s.GrantRole(f.ctx, a, c.other.ID, storage.RoleStudent), "GrantRole")
	must(t, f.s.GrantRole(f.ctx, f.b.ID, c.member.ID, storage.RoleStudent), "GrantRole B")
	st, total, err := f.s.ListStudents(f.ctx, a, "", storage.Page{Limit: 1})
	must(t, err, "ListStudents")
	if total != 2 || len(st) != 1 || st[0].Email != "member@example.test" || st[0].Enrollments != 2 {
		t.Fatalf("students %+v total %d", st, total)
	}
	more, _, _ := f.s.ListStudents(f.ctx, a, "", storage.Page{After: 1, Limit: 5})
	if len(more) != 1 || more[0].Email != "other@example.test" {
		t.Fatalf("students page 2 %+v", more)
	}
	if found, n, _ := f.s.ListStudents(f.ctx, a, "OTHER", storage.Page{}); n != 1 || found[0].UserID != c.other.ID {
		t.Fatalf("search %+v", found)
	}
	// Text no one has matches no one (SQLite would end the pattern at NUL).
	for _, s := range []string{"\x00", "ot\x00her", "\x01", "\xff"} {
		if found, n, err := f.s.ListStudents(f.ctx, a, s, storage.Page{}); err != nil || n != 0 || len(found) != 0 {
			t.Fatalf("search %q: %d %+v %v; want none", s, n, found, err)
		}
	}
	o1 := &storage.Order{SiteID: a, Number: "A-1", UserID: c.member.ID, TotalCents: 4900, Currency: "USD", Status: "paid", RefundStatus: "none", CreatedAt: f.now.UTC().Add(-2 * time.Hour)}
	o2 := &storage.Order{SiteID: a, Number: "A-2", UserID: c.member.ID, TotalCents: 7900, Currency: "USD", CouponCode: "X", Status: "paid", RefundStatus: "full", CreatedAt: f.now.UTC().Add(-time.Hour)}
	ob := &storage.Order{SiteID: f.b.ID, Number: "B-1", UserID: c.member.ID, TotalCents: 1, Currency: "EUR", Status: "paid", RefundStatus: "none", CreatedAt: f.now.UTC()}
	load(t, f, o1, o2, ob)
	load(t, f, &storage.OrderItem{SiteID: a, OrderID: o2.ID, Kind: "course", ItemID: c.secCourse.ID, Title: "Web Security", PriceCents: 7900})
	orders, total, err := f.s.RecentOrders(f.ctx, a, storage.Page{})
	must(t, err, "RecentOrders")
	if total != 2 || orders[0].Number != "A-2" || len(orders[0].Items) != 1 || orders[0].CustomerEmail != "member@example.test" || orders[0].CouponCode != "X" {
		t.Fatalf("orders %+v", orders)
	}
	sum, err := f.s.SalesSummary(f.ctx, a, f.now.Add(-24*time.Hour), f.now.Add(time.Minute))
	must(t, err, "SalesSummary")
	if sum.Orders != 2 || sum.RevenueCents != 4900+7900 || sum.RefundedOrders != 1 || sum.Currency != "USD" || sum.NewEnrollments != 3 {
		t.Fatalf("summary %+v", sum)
	}
}
