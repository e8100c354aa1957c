package storagetest

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// adminFixture adds, at both sites, the parents that admin records point
// at: a person with roles, a course with a section, a plan and a form.
type adminFixture struct {
	*fixture
	person *storage.User
	parent map[tenant.ID]adminParents
}

type adminParents struct {
	course  *storage.Course
	section *storage.Section
	plan    *storage.MembershipPlan
	form    *storage.Form
	post    *storage.Post
}

func newAdminFixture(t *testing.T, f *fixture) *adminFixture {
	t.Helper()
	af := &adminFixture{fixture: f, person: f.user(t, "person@example.test"), parent: map[tenant.ID]adminParents{}}
	for _, site := range []*storage.Site{f.a, f.b} {
		var p adminParents
		p.course = &storage.Course{Slug: "parent", Title: "Parent course", Currency: "USD", Status: storage.StatusDraft}
		must(t, f.s.CourseRecords().Create(f.ctx, site.ID, p.course), "create parent course")
		p.section = &storage.Section{CourseID: p.course.ID, Title: "Parent section"}
		must(t, f.s.SectionRecords().Create(f.ctx, site.ID, p.section), "create parent section")
		p.plan = &storage.MembershipPlan{Slug: "parent-plan", Title: "Plan", Currency: "USD", Interval: "month", Status: storage.StatusPublished}
		must(t, f.s.MembershipPlanRecords().Create(f.ctx, site.ID, p.plan), "create parent plan")
		p.form = &storage.Form{Slug: "parent-form", Title: "Contact", Fields: []storage.FormField{{Name: "message", Label: "Message", Type: "textarea", Required: true}}}
		must(t, f.s.FormRecords().Create(f.ctx, site.ID, p.form), "create parent form")
		p.post = &storage.Post{Slug: "parent-post", Title: "Hello", Status: storage.StatusPublished}
		must(t, f.s.PostRecords().Create(f.ctx, site.ID, p.post), "create parent post")
		af.parent[site.ID] = p
	}
	return af
}

// recordsCase describes one kind of record for the generic Records contract.
type recordsCase[T any] struct {
	recs func(storage.Store) storage.Records[T]
	// make builds a valid record for site; records made with the same n
	// collide on the kind's unique key, if it has one.
	make func(af *adminFixture, site *storage.Site, n int) *T
	// change edits a record for Update.
	change func(*T)
	// unique reports whether the kind has a per-site unique key.
	unique bool
	// match is a field filter that selects the records made with n == 1.
	match func(af *adminFixture, site *storage.Site) storage.Match
}

func fieldOf[T any](rec *T, name string) reflect.Value {
	return reflect.ValueOf(rec).Elem().FieldByName(name)
}
func idOf[T any](rec *T) int64       { return fieldOf(rec, "ID").Int() }
func siteOf[T any](rec *T) tenant.ID { return tenant.ID(fieldOf(rec, "SiteID").Int()) }

// runRecords checks one Records implementation: CRUD, keyset pages, per-site
// uniqueness, and that neither site can read, change or delete the other's
// rows, nor create rows in it.
func runRecords[T any](t *testing.T, f *fixture, c recordsCase[T]) {
	af := newAdminFixture(t, f)
	recs := c.recs(f.s)
	a, b := f.a, f.b

	// The fixture's parents may be of the same kind: count around them.
	before, base, err := recs.List(f.ctx, a.ID, storage.Page{Limit: 100})
	must(t, err, "List A before")
	a1, a2, a3 := c.make(af, a, 1), c.make(af, a, 2), c.make(af, a, 3)
	b1 := c.make(af, b, 1)
	// A record that claims site B, created at A, lands at A.
	fieldOf(a3, "SiteID").Set(reflect.ValueOf(b.ID))
	for _, r := range []struct {
		name string
		site *storage.Site
		rec  *T
	}{{"a1", a, a1}, {"a2", a, a2}, {"a3", a, a3}, {"b1", b, b1}} {
		must(t, recs.Create(f.ctx, r.site.ID, r.rec), "Create "+r.name)
		if idOf(r.rec) == 0 {
			t.Fatalf("Create %s left ID 0", r.name)
		}
		if siteOf(r.rec) != r.site.ID {
			t.Fatalf("Create %s at site %d stored site %d", r.name, r.site.ID, siteOf(r.rec))
		}
	}
	got, err := recs.Get(f.ctx, a.ID, idOf(a1))
	must(t, err, "Get a1")
	diff(t, "Get a1", a1, got)
	if ct := fieldOf(got, "CreatedAt"); ct.IsValid() && ct.Interface().(time.Time).IsZero() {
		t.Error("Create did not set CreatedAt")
	}
	_, err = recs.Get(f.ctx, b.ID, idOf(a1))
	wantErr(t, err, storage.ErrNotFound, "Get A's record through B")
	_, err = recs.Get(f.ctx, a.ID, idOf(b1))
	wantErr(t, err, storage.ErrNotFound, "Get B's record through A")

	// Keyset pages in ID order, and the total of the site's rows.
	var all, want []int64
	for i := range before {
		want = append(want, idOf(&before[i]))
	}
	want = append(want, idOf(a1), idOf(a2), idOf(a3))
	var after int64
	for range 10 {
		page, total, err := recs.List(f.ctx, a.ID, storage.Page{After: after, Limit: 2})
		must(t, err, "List A")
		if total != base+3 {
			t.Fatalf("List A total %d; want %d", total, base+3)
		}
		if len(page) == 0 {
			break
		}
		for i := range page {
			all = append(all, idOf(&page[i]))
		}
		after = all[len(all)-1]
	}
	diff(t, "ids listed at A", want, all)
	bl, total, err := recs.List(f.ctx, b.ID, storage.Page{Limit: 100})
	must(t, err, "List B")
	if total != base+1 || len(bl) != base+1 || idOf(&bl[len(bl)-1]) != idOf(b1) {
		t.Fatalf("List B = %d rows (total %d); want B's parents and b1", len(bl), total)
	}
	for i := range bl {
		if siteOf(&bl[i]) != b.ID {
			t.Fatalf("List B returned a record of site %d", siteOf(&bl[i]))
		}
	}
	if c.match != nil {
		m, total, err := recs.List(f.ctx, a.ID, storage.Page{}, c.match(af, a))
		must(t, err, "List A with match")
		if total != 1 || len(m) != 1 || idOf(&m[0]) != idOf(a1) {
			t.Fatalf("List A matching %+v = %d rows; want a1", c.match(af, a), len(m))
		}
	}
	if _, _, err := recs.List(f.ctx, a.ID, storage.Page{}, storage.Match{Field: "NoSuchField", Value: 1}); err == nil {
		t.Error("List with an unknown match field succeeded; want an error")
	}

	// Update through the other site changes nothing.
	upd := *a1
	c.change(&upd)
	wantErr(t, recs.Update(f.ctx, b.ID, &upd), storage.ErrNotFound, "Update A's record through B")
	still, _ := recs.Get(f.ctx, a.ID, idOf(a1))
	diff(t, "a1 after B's update", a1, still)
	upd = *a1
	c.change(&upd)
	must(t, recs.Update(f.ctx, a.ID, &upd), "Update a1")
	got, err = recs.Get(f.ctx, a.ID, idOf(a1))
	must(t, err, "Get updated a1")
	if ct := fieldOf(got, "CreatedAt"); ct.IsValid() && !sameInstantMs(ct.Interface().(time.Time), fieldOf(a1, "CreatedAt").Interface().(time.Time)) {
		t.Error("Update changed CreatedAt")
	}
	// Compare without UpdatedAt, which Update sets.
	if ut := fieldOf(got, "UpdatedAt"); ut.IsValid() {
		fieldOf(&upd, "UpdatedAt").Set(ut)
	}
	diff(t, "updated a1", &upd, got)
	missing := *a1
	fieldOf(&missing, "ID").SetInt(idOf(b1) + 1000)
	wantErr(t, recs.Update(f.ctx, a.ID, &missing), storage.ErrNotFound, "Update of an unknown ID")

	if c.unique {
		dup := c.make(af, a, 1)
		wantErr(t, recs.Create(f.ctx, a.ID, dup), storage.ErrConflict, "Create a duplicate at A")
		again := c.make(af, b, 2)
		must(t, recs.Create(f.ctx, b.ID, again), "Create at B what A has (another site)")
		clash := *a2
		copyUnique(&clash, a1)
		wantErr(t, recs.Update(f.ctx, a.ID, &clash), storage.ErrConflict, "Update a2 to a1's unique key")
	}

	wantErr(t, recs.Delete(f.ctx, b.ID, idOf(a2)), storage.ErrNotFound, "Delete A's record through B")
	if _, err := recs.Get(f.ctx, a.ID, idOf(a2)); err != nil {
		t.Fatalf("a2 gone after B's delete: %v", err)
	}
	must(t, recs.Delete(f.ctx, a.ID, idOf(a2)), "Delete a2")
	_, err = recs.Get(f.ctx, a.ID, idOf(a2))
	wantErr(t, err, storage.ErrNotFound, "Get deleted a2")
	wantErr(t, recs.Delete(f.ctx, a.ID, idOf(a2)), storage.ErrNotFound, "Delete a2 again")
	if _, err := recs.Get(f.ctx, b.ID, idOf(b1)); err != nil {
		t.Fatalf("B's record gone: %v", err)
	}
}

// copyUnique copies the fields that make up each kind's unique key.
func copyUnique[T any](dst, src *T) {
	for _, name := range []string{"Slug", "Code", "Key", "UserID", "CourseID", "EventID"} {
		if f := fieldOf(dst, name); f.IsValid() {
			f.Set(fieldOf(src, name))
		}
	}
}

func sameInstantMs(x, y time.Time) bool { return x.Sub(y).Abs() < time.Millisecond }

func slugN(prefix string, n int) string { return fmt.Sprintf("%s-%d", prefix, n) }

func testCourseRecords(t *testing.T, f *fixture) {
	runRecords(t, f, recordsCase[storage.Course]{
		recs: func(s storage.Store) storage.Records[storage.Course] { return s.CourseRecords() },
		make: func(af *adminFixture, site *storage.Site, n int) *storage.Course {
			return &storage.Course{Slug: slugN("course", n), Title: "Course", Category: fmt.Sprint("cat", n), Currency: "USD", Status: storage.StatusDraft, PriceCents: int64(n) * 100}
		},
		change: func(c *storage.Course) {
			c.Title, c.Status = "Renamed", storage.StatusPublished
			at := time.Now().In(zone).Truncate(time.Millisecond)
			c.PublishedAt = &at
		},
		unique: true,
		match: func(*adminFixture, *storage.Site) storage.Match {
			return storage.Match{Field: "Category", Value: "cat1"}
		},
	})
}

func testSectionRecords(t *testing.T, f *fixture) {
	runRecords(t, f, recordsCase[storage.Section]{
		recs: func(s storage.Store) storage.Records[storage.Section] { return s.SectionRecords() },
		make: func(af *adminFixture, site *storage.Site, n int) *storage.Section {
			return &storage.Section{CourseID: af.parent[site.ID].course.ID, Title: slugN("section", n), Position: n}
		},
		change: func(s *storage.Section) { s.Title = "Renamed" },
		match:  func(*adminFixture, *storage.Site) storage.Match { return storage.Match{Field: "Position", Value: 1} },
	})
}

func testLectureRecords(t *testing.T, f *fixture) {
	runRecords(t, f, recordsCase[storage.Lecture]{
		recs: func(s storage.Store) storage.Records[storage.Lecture] { return s.LectureRecords() },
		make: func(af *adminFixture, site *storage.Site, n int) *storage.Lecture {
			p := af.parent[site.ID]
			return &storage.Lecture{CourseID: p.course.ID, SectionID: p.section.ID, Title: slugN("lecture", n), Position: n, DurationSeconds: 60 * n, Status: storage.StatusDraft}
		},
		change: func(l *storage.Lecture) { l.Title, l.FreePreview, l.Status = "Renamed", true, storage.StatusPublished },
		match: func(*adminFixture, *storage.Site) storage.Match {
			return storage.Match{Field: "DurationSeconds", Value: 60}
		},
	})
}

func testEnrollmentRecords(t *testing.T, f *fixture) {
	runRecords(t, f, recordsCase[storage.Enrollment]{
		recs: func(s storage.Store) storage.Records[storage.Enrollment] { return s.EnrollmentRecords() },
		make: func(af *adminFixture, site *storage.Site, n int) *storage.Enrollment {
			// One course per n, so that records with the same n collide.
			c := &storage.Course{Slug: slugN("enr-course", n), Title: "C", Currency: "USD", Status: storage.StatusPublished}
			if existing, _, _ := af.s.CourseRecords().List(af.ctx, site.ID, storage.Page{}, storage.Match{Field: "Slug", Value: c.Slug}); len(existing) == 1 {
				c = &existing[0]
			} else if err := af.s.CourseRecords().Create(af.ctx, site.ID, c); err != nil {
				panic("creating the enrollment's course: " + err.Error())
			}
			exp := af.now.Add(time.Duration(n) * day)
			return &storage.Enrollment{UserID: af.person.ID, CourseID: c.ID, EnrolledAt: af.now, ExpiresAt: &exp}
		},
		change: func(e *storage.Enrollment) { e.ExpiresAt = nil },
		unique: true,
	})
}

func testEventRecords(t *testing.T, f *fixture) {
	runRecords(t, f, recordsCase[storage.Event]{
		recs: func(s storage.Store) storage.Records[storage.Event] { return s.EventRecords() },
		make: func(af *adminFixture, site *storage.Site, n int) *storage.Event {
			start := af.now.Add(time.Duration(n) * day)
			return &storage.Event{Slug: slugN("event", n), Title: "Event", StartsAt: start, EndsAt: start.Add(time.Hour), Currency: "USD", Public: true, Status: storage.StatusDraft}
		},
		change: func(e *storage.Event) { e.Public, e.Capacity, e.Location = false, 12, "Online" },
		unique: true,
	})
}

func testMembershipPlanRecords(t *testing.T, f *fixture) {
	runRecords(t, f, recordsCase[storage.MembershipPlan]{
		recs: func(s storage.Store) storage.Records[storage.MembershipPlan] { return s.MembershipPlanRecords() },
		make: func(af *adminFixture, site *storage.Site, n int) *storage.MembershipPlan {
			return &storage.MembershipPlan{Slug: slugN("plan", n), Title: "Plan", Currency: "USD", Interval: "month", Status: storage.StatusDraft}
		},
		change: func(p *storage.MembershipPlan) { p.Interval, p.PriceCents = "year", 9900 },
		unique: true,
	})
}

func testDigitalProductRecords(t *testing.T, f *fixture) {
	runRecords(t, f, recordsCase[storage.DigitalProduct]{
		recs: func(s storage.Store) storage.Records[storage.DigitalProduct] { return s.DigitalProductRecords() },
		make: func(af *adminFixture, site *storage.Site, n int) *storage.DigitalProduct {
			return &storage.DigitalProduct{Slug: slugN("product", n), Title: "Product", Currency: "USD", Status: storage.StatusDraft}
		},
		change: func(p *storage.DigitalProduct) { p.Status, p.Description = storage.StatusPublished, "Now out" },
		unique: true,
	})
}

func testLecturerRecords(t *testing.T, f *fixture) {
	runRecords(t, f, recordsCase[storage.Lecturer]{
		recs: func(s storage.Store) storage.Records[storage.Lecturer] { return s.LecturerRecords() },
		make: func(af *adminFixture, site *storage.Site, n int) *storage.Lecturer {
			return &storage.Lecturer{Slug: slugN("lecturer", n), Name: "Lecturer"}
		},
		change: func(l *storage.Lecturer) { l.Bio = "Teaches things." },
		unique: true,
	})
}

func testCouponRecords(t *testing.T, f *fixture) {
	runRecords(t, f, recordsCase[storage.Coupon]{
		recs: func(s storage.Store) storage.Records[storage.Coupon] { return s.CouponRecords() },
		make: func(af *adminFixture, site *storage.Site, n int) *storage.Coupon {
			return &storage.Coupon{Code: slugN("SAVE", n), PercentOff: 10 * n, Currency: "USD", Active: true}
		},
		change: func(c *storage.Coupon) {
			c.Active, c.MaxRedemptions = false, 5
			exp := time.Now().In(zone).Add(day).Truncate(time.Millisecond)
			c.ExpiresAt = &exp
		},
		unique: true,
		match:  func(*adminFixture, *storage.Site) storage.Match { return storage.Match{Field: "PercentOff", Value: 10} },
	})
}

func testPostRecords(t *testing.T, f *fixture) {
	runRecords(t, f, recordsCase[storage.Post]{
		recs: func(s storage.Store) storage.Records[storage.Post] { return s.PostRecords() },
		make: func(af *adminFixture, site *storage.Site, n int) *storage.Post {
			return &storage.Post{Slug: slugN("post", n), Title: "Post", Body: "Text", Status: storage.StatusDraft, AuthorID: af.person.ID}
		},
		change: func(p *storage.Post) { p.Body = "New text" },
		unique: true,
	})
}

func testPageRecords(t *testing.T, f *fixture) {
	runRecords(t, f, recordsCase[storage.SitePage]{
		recs: func(s storage.Store) storage.Records[storage.SitePage] { return s.PageRecords() },
		make: func(af *adminFixture, site *storage.Site, n int) *storage.SitePage {
			return &storage.SitePage{Slug: slugN("page", n), Title: "Page", Status: storage.StatusPublished}
		},
		change: func(p *storage.SitePage) { p.Title = "About us" },
		unique: true,
	})
}

func testCommentRecords(t *testing.T, f *fixture) {
	runRecords(t, f, recordsCase[storage.Comment]{
		recs: func(s storage.Store) storage.Records[storage.Comment] { return s.CommentRecords() },
		make: func(af *adminFixture, site *storage.Site, n int) *storage.Comment {
			p := af.parent[site.ID]
			c := &storage.Comment{UserID: af.person.ID, Body: slugN("comment", n), CreatedAt: af.now}
			if n == 1 {
				c.PostID = &p.post.ID
			} else {
				c.CourseID = &p.course.ID
			}
			return c
		},
		change: func(c *storage.Comment) { c.Body = "edited" },
		match: func(af *adminFixture, site *storage.Site) storage.Match {
			return storage.Match{Field: "PostID", Value: af.parent[site.ID].post.ID}
		},
	})
}

func testFormSubmissionRecords(t *testing.T, f *fixture) {
	runRecords(t, f, recordsCase[storage.FormSubmission]{
		recs: func(s storage.Store) storage.Records[storage.FormSubmission] { return s.FormSubmissionRecords() },
		make: func(af *adminFixture, site *storage.Site, n int) *storage.FormSubmission {
			s := &storage.FormSubmission{FormID: af.parent[site.ID].form.ID, Email: slugN("visitor", n) + "@example.test", Data: map[string]string{"message": "hi"}}
			if n == 1 {
				s.UserID = &af.person.ID
			}
			return s
		},
		change: func(s *storage.FormSubmission) { s.Data = map[string]string{"message": "edited"} },
		match: func(af *adminFixture, site *storage.Site) storage.Match {
			return storage.Match{Field: "UserID", Value: af.person.ID}
		},
	})
}

func testFileRecords(t *testing.T, f *fixture) {
	runRecords(t, f, recordsCase[storage.File]{
		recs: func(s storage.Store) storage.Records[storage.File] { return s.FileRecords() },
		make: func(af *adminFixture, site *storage.Site, n int) *storage.File {
			return &storage.File{Key: slugN("key", n), Name: "logo.png", ContentType: "image/png", SizeBytes: int64(n), SHA256: "00", CreatedBy: af.person.ID}
		},
		change: func(fl *storage.File) { fl.Name = "renamed.png" },
		unique: true,
		match:  func(*adminFixture, *storage.Site) storage.Match { return storage.Match{Field: "Key", Value: "key-1"} },
	})
}

func testSubscriptionRecords(t *testing.T, f *fixture) {
	runRecords(t, f, recordsCase[storage.Subscription]{
		recs: func(s storage.Store) storage.Records[storage.Subscription] { return s.SubscriptionRecords() },
		make: func(af *adminFixture, site *storage.Site, n int) *storage.Subscription {
			status := storage.SubscriptionActive
			if n != 1 {
				status = storage.SubscriptionPastDue
			}
			return &storage.Subscription{UserID: af.person.ID, PlanID: af.parent[site.ID].plan.ID, Status: status, StartedAt: af.now, CurrentPeriodEnd: af.now.Add(30 * day)}
		},
		change: func(s *storage.Subscription) {
			at := time.Now().In(zone).Truncate(time.Millisecond)
			s.Status, s.CanceledAt = storage.SubscriptionCanceled, &at
		},
		match: func(*adminFixture, *storage.Site) storage.Match {
			return storage.Match{Field: "Status", Value: storage.SubscriptionActive}
		},
	})
}

func testEventRegistrationRecords(t *testing.T, f *fixture) {
	runRecords(t, f, recordsCase[storage.EventRegistration]{
		recs: func(s storage.Store) storage.Records[storage.EventRegistration] { return s.EventRegistrationRecords() },
		make: func(af *adminFixture, site *storage.Site, n int) *storage.EventRegistration {
			// One event per n, so that registrations with the same n collide.
			slug := slugN("reg-event", n)
			ev, _, _ := af.s.EventRecords().List(af.ctx, site.ID, storage.Page{}, storage.Match{Field: "Slug", Value: slug})
			if len(ev) == 0 {
				e := storage.Event{Slug: slug, Title: "E", StartsAt: af.now, EndsAt: af.now.Add(time.Hour), Currency: "USD", Status: storage.StatusPublished}
				if err := af.s.EventRecords().Create(af.ctx, site.ID, &e); err != nil {
					panic("creating the registration's event: " + err.Error())
				}
				ev = append(ev, e)
			}
			return &storage.EventRegistration{UserID: af.person.ID, EventID: ev[0].ID, RegisteredAt: af.now}
		},
		change: func(r *storage.EventRegistration) { r.RegisteredAt = r.RegisteredAt.Add(-time.Hour) },
		unique: true,
	})
}

func testDigitalProductPurchaseRecords(t *testing.T, f *fixture) {
	runRecords(t, f, recordsCase[storage.DigitalProductPurchase]{
		recs: func(s storage.Store) storage.Records[storage.DigitalProductPurchase] {
			return s.DigitalProductPurchaseRecords()
		},
		make: func(af *adminFixture, site *storage.Site, n int) *storage.DigitalProductPurchase {
			p := storage.DigitalProduct{Slug: slugN("bought", n), Title: "P", Currency: "USD", Status: storage.StatusPublished}
			if err := af.s.DigitalProductRecords().Create(af.ctx, site.ID, &p); err != nil {
				p2, _, _ := af.s.DigitalProductRecords().List(af.ctx, site.ID, storage.Page{}, storage.Match{Field: "Slug", Value: p.Slug})
				p = p2[0]
			}
			return &storage.DigitalProductPurchase{UserID: af.person.ID, ProductID: p.ID, PurchasedAt: af.now.Add(time.Duration(n) * time.Minute)}
		},
		change: func(p *storage.DigitalProductPurchase) { p.PurchasedAt = p.PurchasedAt.Add(time.Hour) },
		match: func(af *adminFixture, site *storage.Site) storage.Match {
			ps, _, _ := af.s.DigitalProductRecords().List(af.ctx, site.ID, storage.Page{}, storage.Match{Field: "Slug", Value: "bought-1"})
			return storage.Match{Field: "ProductID", Value: ps[0].ID}
		},
	})
}

// A deleted parent takes its rows along; a plan still subscribed to
// cannot be deleted (ErrConflict).
func testAdminCascades(t *testing.T, f *fixture) {
	af := newAdminFixture(t, f)
	a := af.parent[f.a.ID]
	l := &storage.Lecture{CourseID: a.course.ID, SectionID: a.section.ID, Title: "L", Status: storage.StatusDraft}
	must(t, f.s.LectureRecords().Create(f.ctx, f.a.ID, l), "create lecture")
	sub := &storage.Subscription{UserID: af.person.ID, PlanID: a.plan.ID, Status: storage.SubscriptionActive, StartedAt: f.now, CurrentPeriodEnd: f.now.Add(day)}
	must(t, f.s.SubscriptionRecords().Create(f.ctx, f.a.ID, sub), "create subscription")
	wantErr(t, f.s.MembershipPlanRecords().Delete(f.ctx, f.a.ID, a.plan.ID), storage.ErrConflict, "delete a plan with a subscription")
	submission := &storage.FormSubmission{FormID: a.form.ID, Email: "x@example.test", Data: map[string]string{}}
	must(t, f.s.FormSubmissionRecords().Create(f.ctx, f.a.ID, submission), "create submission")

	must(t, f.s.CourseRecords().Delete(f.ctx, f.a.ID, a.course.ID), "delete course")
	_, err := f.s.SectionRecords().Get(f.ctx, f.a.ID, a.section.ID)
	wantErr(t, err, storage.ErrNotFound, "section of a deleted course")
	_, err = f.s.LectureRecords().Get(f.ctx, f.a.ID, l.ID)
	wantErr(t, err, storage.ErrNotFound, "lecture of a deleted course")
	must(t, f.s.FormRecords().Delete(f.ctx, f.a.ID, a.form.ID), "delete form")
	_, err = f.s.FormSubmissionRecords().Get(f.ctx, f.a.ID, submission.ID)
	wantErr(t, err, storage.ErrNotFound, "submission of a deleted form")
	b := af.parent[f.b.ID]
	if _, err := f.s.SectionRecords().Get(f.ctx, f.b.ID, b.section.ID); err != nil {
		t.Fatalf("B's section gone with A's course: %v", err)
	}
}

func testCurriculum(t *testing.T, f *fixture) {
	af := newAdminFixture(t, f)
	a, site := af.parent[f.a.ID], f.a.ID
	s2 := &storage.Section{CourseID: a.course.ID, Title: "Second", Position: 1}
	must(t, f.s.SectionRecords().Create(f.ctx, site, s2), "create section")
	var ls []*storage.Lecture
	for i, sec := range []int64{a.section.ID, a.section.ID, s2.ID} {
		l := &storage.Lecture{CourseID: a.course.ID, SectionID: sec, Title: fmt.Sprint("L", i), Position: i, Status: storage.StatusDraft}
		must(t, f.s.LectureRecords().Create(f.ctx, site, l), "create lecture")
		ls = append(ls, l)
	}
	titles := func(out []storage.SectionOutline) [][]string {
		var got [][]string
		for _, s := range out {
			row := []string{s.Title}
			for _, l := range s.Lectures {
				row = append(row, l.Title)
			}
			got = append(got, row)
		}
		return got
	}
	out, err := f.s.Curriculum(f.ctx, site, a.course.ID)
	must(t, err, "Curriculum")
	diff(t, "curriculum", [][]string{{"Parent section", "L0", "L1"}, {"Second", "L2"}}, titles(out))

	// Second section first; L2 first in it, L0 moves over; L1 stays.
	order := []storage.PositionOrder{{SectionID: s2.ID, LectureIDs: []int64{ls[2].ID, ls[0].ID}}, {SectionID: a.section.ID, LectureIDs: []int64{ls[1].ID}}}
	must(t, f.s.ReorderCurriculum(f.ctx, site, a.course.ID, order), "ReorderCurriculum")
	out, _ = f.s.Curriculum(f.ctx, site, a.course.ID)
	diff(t, "reordered curriculum", [][]string{{"Second", "L2", "L0"}, {"Parent section", "L1"}}, titles(out))

	// An ID of site B, or of another course, changes nothing.
	b := af.parent[f.b.ID]
	bad := []storage.PositionOrder{{SectionID: a.section.ID, LectureIDs: []int64{ls[1].ID}}, {SectionID: b.section.ID}}
	wantErr(t, f.s.ReorderCurriculum(f.ctx, site, a.course.ID, bad), storage.ErrNotFound, "reorder with B's section")
	out, _ = f.s.Curriculum(f.ctx, site, a.course.ID)
	diff(t, "curriculum after a refused reorder", [][]string{{"Second", "L2", "L0"}, {"Parent section", "L1"}}, titles(out))
	_, err = f.s.Curriculum(f.ctx, f.b.ID, a.course.ID)
	wantErr(t, err, storage.ErrNotFound, "A's curriculum through B")
	wantErr(t, f.s.ReorderCurriculum(f.ctx, f.b.ID, a.course.ID, order), storage.ErrNotFound, "reorder A's course through B")
}

func testListMembers(t *testing.T, f *fixture) {
	owner, lect, student := f.user(t, "olga@example.test"), f.user(t, "lee@example.test"), f.user(t, "sam@example.test")
	must(t, f.s.GrantRole(f.ctx, f.a.ID, owner.ID, storage.RoleOwner), "grant")
	must(t, f.s.GrantRole(f.ctx, f.a.ID, owner.ID, storage.RoleAdmin), "grant")
	must(t, f.s.GrantRole(f.ctx, f.a.ID, lect.ID, storage.RoleLecturer), "grant")
	must(t, f.s.GrantRole(f.ctx, f.a.ID, student.ID, storage.RoleStudent), "grant")
	must(t, f.s.GrantRole(f.ctx, f.b.ID, student.ID, storage.RoleOwner), "grant at B")
	type row struct {
		Email string
		Roles []string
	}
	rows := func(ms []storage.MemberView) []row {
		var out []row
		for _, m := range ms {
			if m.Since.IsZero() {
				t.Errorf("member %s has no Since", m.Email)
			}
			out = append(out, row{m.Email, m.Roles})
		}
		return out
	}
	first, total, err := f.s.ListMembers(f.ctx, f.a.ID, "", storage.Page{Limit: 2})
	must(t, err, "ListMembers")
	if total != 3 {
		t.Fatalf("members at A: %d; want 3", total)
	}
	diff(t, "first page", []row{{"lee@example.test", []string{"lecturer"}}, {"olga@example.test", []string{"admin", "owner"}}}, rows(first))
	rest, _, _ := f.s.ListMembers(f.ctx, f.a.ID, "", storage.Page{After: 2, Limit: 2})
	diff(t, "second page", []row{{"sam@example.test", []string{"student"}}}, rows(rest))
	owners, total, _ := f.s.ListMembers(f.ctx, f.a.ID, storage.RoleOwner, storage.Page{})
	if total != 1 {
		t.Fatalf("owners at A: %d; want 1", total)
	}
	diff(t, "owners at A (all their roles)", []row{{"olga@example.test", []string{"admin", "owner"}}}, rows(owners))
	atB, _, _ := f.s.ListMembers(f.ctx, f.b.ID, "", storage.Page{})
	diff(t, "members at B", []row{{"sam@example.test", []string{"owner"}}}, rows(atB))
}

func testOrderByID(t *testing.T, f *fixture) {
	u := f.user(t, "buyer@example.test")
	oa := &storage.Order{SiteID: f.a.ID, Number: "A-1", UserID: u.ID, TotalCents: 4900, Currency: "USD", CouponCode: "SAVE", Status: "paid", RefundStatus: "partial", CreatedAt: f.now.UTC()}
	ob := &storage.Order{SiteID: f.b.ID, Number: "B-1", UserID: u.ID, TotalCents: 100, Currency: "EUR", Status: "paid", RefundStatus: "none", CreatedAt: f.now.UTC()}
	load(t, f, oa, ob)
	load(t, f, &storage.OrderItem{SiteID: f.a.ID, OrderID: oa.ID, Kind: "course", ItemID: 1, Title: "Go", PriceCents: 4900},
		&storage.OrderItem{SiteID: f.b.ID, OrderID: ob.ID, Kind: "course", ItemID: 2, Title: "B", PriceCents: 100})
	got, err := f.s.OrderByID(f.ctx, f.a.ID, oa.ID)
	must(t, err, "OrderByID")
	if got.Number != "A-1" || got.CustomerEmail != "buyer@example.test" || got.CouponCode != "SAVE" || got.RefundStatus != "partial" || len(got.Items) != 1 || got.Items[0].Title != "Go" {
		t.Fatalf("order %+v", got)
	}
	_, err = f.s.OrderByID(f.ctx, f.a.ID, ob.ID)
	wantErr(t, err, storage.ErrNotFound, "B's order through A")
}

func testEnrollmentSummary(t *testing.T, f *fixture) {
	af := newAdminFixture(t, f)
	other := f.user(t, "other@example.test")
	pub := &storage.Course{Slug: "popular", Title: "Popular", Currency: "USD", Status: storage.StatusPublished}
	must(t, f.s.CourseRecords().Create(f.ctx, f.a.ID, pub), "create course")
	for _, e := range []*storage.Enrollment{
		{UserID: af.person.ID, CourseID: pub.ID, EnrolledAt: f.now.Add(-time.Hour)},
		{UserID: other.ID, CourseID: pub.ID, EnrolledAt: f.now.Add(-2 * time.Hour)},
		{UserID: af.person.ID, CourseID: af.parent[f.a.ID].course.ID, EnrolledAt: f.now.Add(-3 * time.Hour)},
		{UserID: other.ID, CourseID: af.parent[f.a.ID].course.ID, EnrolledAt: f.now.Add(-10 * day)}, // before the period
	} {
		must(t, f.s.EnrollmentRecords().Create(f.ctx, f.a.ID, e), "enroll")
	}
	must(t, f.s.EnrollmentRecords().Create(f.ctx, f.b.ID, &storage.Enrollment{UserID: other.ID, CourseID: af.parent[f.b.ID].course.ID, EnrolledAt: f.now}), "enroll at B")
	got, err := f.s.EnrollmentSummary(f.ctx, f.a.ID, f.now.Add(-day), f.now)
	must(t, err, "EnrollmentSummary")
	diff(t, "summary", []storage.CourseEnrollments{
		{CourseID: pub.ID, Slug: "popular", Title: "Popular", Enrollments: 2},
		{CourseID: af.parent[f.a.ID].course.ID, Slug: "parent", Title: "Parent course", Enrollments: 1},
	}, got)
}

func testAppearance(t *testing.T, f *fixture) {
	_, err := f.s.Appearance(f.ctx, f.a.ID)
	wantErr(t, err, storage.ErrNotFound, "Appearance never set")
	logo := &storage.File{Key: "logo", Name: "logo.png", ContentType: "image/png", SizeBytes: 3, SHA256: "00"}
	must(t, f.s.FileRecords().Create(f.ctx, f.a.ID, logo), "create file")
	a := storage.DefaultAppearance(f.a.ID)
	a.LogoFileID = &logo.ID
	must(t, f.s.SaveAppearance(f.ctx, a), "SaveAppearance")
	a2 := storage.DefaultAppearance(f.a.ID)
	a2.PrimaryColor = "#000000"
	must(t, f.s.SaveAppearance(f.ctx, a2), "SaveAppearance again")
	got, err := f.s.Appearance(f.ctx, f.a.ID)
	must(t, err, "Appearance")
	if got.PrimaryColor != "#000000" || got.LogoFileID != nil {
		t.Fatalf("appearance %+v; want the second save (no logo)", got)
	}
	_, err = f.s.Appearance(f.ctx, f.b.ID)
	wantErr(t, err, storage.ErrNotFound, "B's appearance")
}
