package demo

import (
	"context"
	"time"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

type courseSpec struct {
	slug, title, subtitle, category, description string
	priceCents                                   int64
	status                                       string
	lecturers                                    []int // indexes into the site's lecturers
	sections                                     []sectionSpec
}

type sectionSpec struct {
	title    string
	lectures []lectureSpec
}

type lectureSpec struct {
	title   string
	minutes int
	preview bool
	draft   bool
}

var academyCourses = []courseSpec{
	{
		slug: "go-fundamentals", title: "Go Fundamentals", subtitle: "From hello world to concurrent services",
		category: "Programming", priceCents: 4900, status: storage.StatusPublished, lecturers: []int{0},
		description: "Learn Go by building a small web service: types, interfaces, errors, goroutines and tests.",
		sections: []sectionSpec{
			{"Getting started", []lectureSpec{{"Installing Go", 8, true, false}, {"Your first program", 12, false, false}}},
			{"Concurrency", []lectureSpec{{"Goroutines and channels", 22, false, false}, {"The context package", 18, false, false}, {"Unfinished: generics deep dive", 30, false, true}}},
		},
	},
	{
		slug: "web-security-essentials", title: "Web Security Essentials", subtitle: "OAuth, sessions and the OWASP Top 10",
		category: "Security", priceCents: 7900, status: storage.StatusPublished, lecturers: []int{1},
		description: "How real attacks work and how to stop them: injection, XSS, CSRF, OAuth 2.0 and PKCE.",
		sections: []sectionSpec{
			{"Foundations", []lectureSpec{{"Threat modelling", 15, true, false}, {"Same-origin policy", 14, false, false}}},
			{"Authentication", []lectureSpec{{"Sessions and cookies", 20, false, false}, {"OAuth 2.0 with PKCE", 25, false, false}}},
		},
	},
	{
		slug: "data-analysis-with-sql", title: "Data Analysis with SQL", subtitle: "Ask your data good questions",
		category: "Data", priceCents: 5900, status: storage.StatusPublished, lecturers: []int{0},
		description: "SELECT to window functions: analyse sales, cohorts and funnels with PostgreSQL.",
		sections: []sectionSpec{
			{"Querying", []lectureSpec{{"SELECT and WHERE", 10, true, false}, {"Joins", 16, false, false}}},
			{"Analysis", []lectureSpec{{"Window functions", 21, false, false}}},
		},
	},
	{
		slug: "intro-to-machine-learning", title: "Introduction to Machine Learning", subtitle: "Models you can explain",
		category: "Data", priceCents: 9900, status: storage.StatusPublished, lecturers: []int{1, 0},
		description: "Regression, classification and evaluation, with the statistics behind them.",
		sections: []sectionSpec{
			{"Basics", []lectureSpec{{"What is a model?", 9, true, false}, {"Linear regression", 24, false, false}}},
		},
	},
	{
		slug: "public-speaking-for-engineers", title: "Public Speaking for Engineers", subtitle: "Give the talk you would want to hear",
		category: "Soft skills", priceCents: 2900, status: storage.StatusPublished, lecturers: []int{1},
		description: "Structure, slides and delivery for technical talks.",
		sections: []sectionSpec{
			{"Preparing", []lectureSpec{{"Finding your message", 11, true, false}, {"Slides that help", 13, false, false}}},
		},
	},
	{
		slug: DraftCourseSlug, title: "Advanced Distributed Systems", subtitle: "Consensus, clocks and failure",
		category: "Programming", priceCents: 12900, status: storage.StatusDraft, lecturers: []int{0},
		description: "Not yet published: Raft, vector clocks and chaos testing.",
		sections: []sectionSpec{
			{"Consensus", []lectureSpec{{"Raft by hand", 35, false, false}}},
		},
	},
}

var openCourses = []courseSpec{
	{
		slug: "python-basics", title: "Python Basics", subtitle: "Programming for everyone",
		category: "Programming", priceCents: 0, status: storage.StatusPublished, lecturers: []int{0},
		description: "Variables, loops and functions, one small program at a time.",
		sections: []sectionSpec{
			{"First steps", []lectureSpec{{"Hello, Python", 7, true, false}, {"Loops", 12, false, false}}},
		},
	},
	{
		slug: "creative-writing", title: "Creative Writing", subtitle: "Short stories in six weeks",
		category: "Writing", priceCents: 3900, status: storage.StatusPublished, lecturers: []int{0},
		description: "Character, scene and revision.",
		sections: []sectionSpec{
			{"Craft", []lectureSpec{{"Characters who want things", 14, true, false}}},
		},
	},
}

// loadCatalog inserts the courses, products, events and the student's
// purchases and progress.
func loadCatalog(ctx context.Context, load Loader, sum *Summary, now time.Time) error {
	a, o := sum.Academy.ID, sum.Open.ID
	lecturerUser := sum.Users[LecturerEmail].ID
	academyLecturers := []*storage.Lecturer{
		{SiteID: a, Slug: "maya-chen", Name: "Maya Chen", Bio: "Backend engineer; ten years of Go in production.", UserID: &lecturerUser, CreatedAt: now, UpdatedAt: now},
		{SiteID: a, Slug: "tomas-rivera", Name: "Tomás Rivera", Bio: "Security engineer and incident responder.", CreatedAt: now, UpdatedAt: now},
	}
	openLecturers := []*storage.Lecturer{
		{SiteID: o, Slug: "ines-okafor", Name: "Inès Okafor", Bio: "Teacher and novelist.", CreatedAt: now, UpdatedAt: now},
	}
	if err := load.Load(ctx, anys(academyLecturers, openLecturers)...); err != nil {
		return err
	}
	academy, err := loadCourses(ctx, load, a, academyCourses, academyLecturers, now)
	if err != nil {
		return err
	}
	open, err := loadCourses(ctx, load, o, openCourses, openLecturers, now)
	if err != nil {
		return err
	}

	plan := &storage.MembershipPlan{SiteID: a, Slug: "all-access", Title: "All Access", Description: "Every published course while you are a member.", PriceCents: 1900, Currency: defaultCurrency, Interval: "month", Status: storage.StatusPublished, CreatedAt: now, UpdatedAt: now}
	openPlan := &storage.MembershipPlan{SiteID: o, Slug: "supporter", Title: "Supporter", Description: "Support the school; get early access to new courses.", PriceCents: 500, Currency: defaultCurrency, Interval: "month", Status: storage.StatusPublished, CreatedAt: now, UpdatedAt: now}
	product := &storage.DigitalProduct{SiteID: a, Slug: "go-cheat-sheet", Title: "Go Cheat Sheet", Description: "A printable two-page reference.", PriceCents: 900, Currency: defaultCurrency, Status: storage.StatusPublished, CreatedAt: now, UpdatedAt: now}
	draftProduct := &storage.DigitalProduct{SiteID: a, Slug: "unreleased-ebook", Title: "Unreleased E-book", Description: "Draft.", PriceCents: 1900, Currency: defaultCurrency, Status: storage.StatusDraft, CreatedAt: now, UpdatedAt: now}
	service := &storage.ConsultingService{SiteID: a, Slug: "code-review-session", Title: "Code Review Sessions", Description: "Three one-hour reviews of your code with a lecturer.", PriceCents: 15000, Currency: defaultCurrency, Sessions: 3, Status: storage.StatusPublished, CreatedAt: now, UpdatedAt: now}
	day := 24 * time.Hour
	qa := &storage.Event{SiteID: a, Slug: "live-qa-go", Title: "Live Q&A: Go in Production", Description: "Bring your questions about running Go services.", Location: "Online", StartsAt: now.Add(14 * day), EndsAt: now.Add(14*day + time.Hour), PriceCents: 0, Currency: defaultCurrency, Capacity: 200, Public: true, Status: storage.StatusPublished, CreatedAt: now, UpdatedAt: now}
	workshop := &storage.Event{SiteID: a, Slug: "security-workshop", Title: "Hands-on Security Workshop", Description: "Break and fix a vulnerable web app.", Location: "Berlin", StartsAt: now.Add(30 * day), EndsAt: now.Add(30*day + 3*time.Hour), PriceCents: 4900, Currency: defaultCurrency, Capacity: 30, Public: true, Status: storage.StatusPublished, CreatedAt: now, UpdatedAt: now}
	staffEvent := &storage.Event{SiteID: a, Slug: "staff-planning", Title: "Staff Planning", Description: "Internal.", Location: "Online", StartsAt: now.Add(7 * day), EndsAt: now.Add(7*day + time.Hour), Currency: defaultCurrency, Public: false, Status: storage.StatusPublished, CreatedAt: now, UpdatedAt: now}
	if err := load.Load(ctx, plan, openPlan, product, draftProduct, service, qa, workshop, staffEvent); err != nil {
		return err
	}

	student := sum.Users[StudentEmail].ID
	expires := now.Add(365 * day)
	orders := []*storage.Order{
		{SiteID: a, Number: "DA-1001", UserID: student, TotalCents: 4900, Currency: defaultCurrency, Status: "paid", RefundStatus: "none", CreatedAt: now.Add(-60 * day)},
		{SiteID: a, Number: "DA-1002", UserID: student, TotalCents: 7110, Currency: defaultCurrency, CouponCode: "SPRING10", Status: "paid", RefundStatus: "none", CreatedAt: now.Add(-30 * day)},
		{SiteID: a, Number: "DA-1003", UserID: student, TotalCents: 900, Currency: defaultCurrency, Status: "paid", RefundStatus: "none", CreatedAt: now.Add(-20 * day)},
		{SiteID: a, Number: "DA-1004", UserID: student, TotalCents: 15000, Currency: defaultCurrency, Status: "paid", RefundStatus: "partial", CreatedAt: now.Add(-10 * day)},
	}
	if err := load.Load(ctx, anys(orders)...); err != nil {
		return err
	}
	goCourse, secCourse := academy["go-fundamentals"], academy["web-security-essentials"]
	items := []any{
		&storage.OrderItem{SiteID: a, OrderID: orders[0].ID, Kind: "course", ItemID: goCourse.course.ID, Title: goCourse.course.Title, PriceCents: 4900},
		&storage.OrderItem{SiteID: a, OrderID: orders[1].ID, Kind: "course", ItemID: secCourse.course.ID, Title: secCourse.course.Title, PriceCents: 7900},
		&storage.OrderItem{SiteID: a, OrderID: orders[2].ID, Kind: "digital_product", ItemID: product.ID, Title: product.Title, PriceCents: 900},
		&storage.OrderItem{SiteID: a, OrderID: orders[3].ID, Kind: "consulting_service", ItemID: service.ID, Title: service.Title, PriceCents: 15000},
		&storage.Enrollment{SiteID: a, UserID: student, CourseID: goCourse.course.ID, EnrolledAt: now.Add(-60 * day)},
		&storage.Enrollment{SiteID: a, UserID: student, CourseID: secCourse.course.ID, EnrolledAt: now.Add(-30 * day), ExpiresAt: &expires},
		&storage.LectureProgress{SiteID: a, UserID: student, CourseID: goCourse.course.ID, LectureID: goCourse.lectures[0].ID, PositionSeconds: 480, Completed: true, UpdatedAt: now.Add(-50 * day)},
		&storage.LectureProgress{SiteID: a, UserID: student, CourseID: goCourse.course.ID, LectureID: goCourse.lectures[2].ID, PositionSeconds: 754, UpdatedAt: now.Add(-2 * day)},
		&storage.LectureProgress{SiteID: a, UserID: student, CourseID: secCourse.course.ID, LectureID: secCourse.lectures[1].ID, PositionSeconds: 312, UpdatedAt: now.Add(-1 * day)},
		&storage.DigitalProductPurchase{SiteID: a, UserID: student, ProductID: product.ID, OrderID: &orders[2].ID, PurchasedAt: orders[2].CreatedAt},
		&storage.ConsultingPurchase{SiteID: a, UserID: student, ServiceID: service.ID, OrderID: &orders[3].ID, SessionsIncluded: 3, SessionsUsed: 1, PurchasedAt: orders[3].CreatedAt},
		&storage.EventRegistration{SiteID: a, UserID: student, EventID: qa.ID, RegisteredAt: now.Add(-3 * day)},
		&storage.Enrollment{SiteID: o, UserID: student, CourseID: open["python-basics"].course.ID, EnrolledAt: now.Add(-5 * day)},
	}
	read := now.Add(-12 * time.Hour)
	items = append(items,
		&storage.Notification{SiteID: a, UserID: student, Kind: "course_update", Title: "New lecture in Go Fundamentals", Body: "\"The context package\" is now available.", URL: sum.Academy.Origin + "/courses/go-fundamentals", CreatedAt: now.Add(-3 * day), ReadAt: &read},
		&storage.Notification{SiteID: a, UserID: student, Kind: "event_reminder", Title: "Live Q&A in two weeks", Body: "You registered for Live Q&A: Go in Production.", URL: sum.Academy.Origin + "/events/live-qa-go", CreatedAt: now.Add(-2 * day)},
		&storage.Notification{SiteID: a, UserID: student, Kind: "announcement", Title: "Welcome to Demo Academy", Body: "Your learning dashboard is ready.", URL: sum.Academy.Origin + "/", CreatedAt: now.Add(-1 * day)},
		&storage.NotificationSubscription{SiteID: a, UserID: student, Topic: "course_updates", Channel: "email", Enabled: true, UpdatedAt: now},
		&storage.NotificationSubscription{SiteID: a, UserID: student, Topic: "announcements", Channel: "email", Enabled: false, UpdatedAt: now},
		&storage.NotificationSubscription{SiteID: a, UserID: student, Topic: "event_reminders", Channel: "push", Enabled: true, UpdatedAt: now},
		// What members send and operators only read (the admin API's
		// comments and form submissions): one of each, so every read
		// operation of the API has something to show.
		&storage.Comment{SiteID: a, UserID: student, CourseID: &goCourse.course.ID, LectureID: &goCourse.lectures[2].ID, Body: "Could the context lecture show a cancellation example?", CreatedAt: now.Add(-2 * day)},
	)
	if err := load.Load(ctx, items...); err != nil {
		return err
	}
	contact := &storage.Form{SiteID: a, Slug: "questions", Title: "Ask a question", Fields: []storage.FormField{
		{Name: "email", Label: "E-mail", Type: "email", Required: true}, {Name: "message", Label: "Message", Type: "textarea", Required: true},
	}, CreatedAt: now, UpdatedAt: now}
	if err := load.Load(ctx, contact); err != nil {
		return err
	}
	return load.Load(ctx, &storage.FormSubmission{SiteID: a, FormID: contact.ID, UserID: &student, Email: StudentEmail,
		Data: map[string]string{"email": StudentEmail, "message": "Is there a student discount?"}, CreatedAt: now.Add(-4 * day)})
}

type loadedCourse struct {
	course   *storage.Course
	lectures []*storage.Lecture // in curriculum order
}

func loadCourses(ctx context.Context, load Loader, site tenant.ID, specs []courseSpec, lecturers []*storage.Lecturer, now time.Time) (map[string]loadedCourse, error) {
	out := map[string]loadedCourse{}
	for _, spec := range specs {
		c := &storage.Course{SiteID: site, Slug: spec.slug, Title: spec.title, Subtitle: spec.subtitle, Description: spec.description,
			Category: spec.category, PriceCents: spec.priceCents, Currency: defaultCurrency, Status: spec.status, CreatedAt: now, UpdatedAt: now}
		if spec.status == storage.StatusPublished {
			c.PublishedAt = &now
		}
		if err := load.Load(ctx, c); err != nil {
			return nil, err
		}
		lc := loadedCourse{course: c}
		var rows []any
		for i, li := range spec.lecturers {
			rows = append(rows, &storage.CourseLecturer{SiteID: site, CourseID: c.ID, LecturerID: lecturers[li].ID, Position: i})
		}
		if err := load.Load(ctx, rows...); err != nil {
			return nil, err
		}
		for si, sec := range spec.sections {
			s := &storage.Section{SiteID: site, CourseID: c.ID, Title: sec.title, Position: si}
			if err := load.Load(ctx, s); err != nil {
				return nil, err
			}
			for li, l := range sec.lectures {
				status := storage.StatusPublished
				if l.draft {
					status = storage.StatusDraft
				}
				lec := &storage.Lecture{SiteID: site, CourseID: c.ID, SectionID: s.ID, Title: l.title, Position: li,
					DurationSeconds: l.minutes * 60, FreePreview: l.preview, Status: status}
				if err := load.Load(ctx, lec); err != nil {
					return nil, err
				}
				lc.lectures = append(lc.lectures, lec)
			}
		}
		out[spec.slug] = lc
	}
	return out, nil
}

func anys[T any](lists ...[]*T) []any {
	var out []any
	for _, l := range lists {
		for _, v := range l {
			out = append(out, v)
		}
	}
	return out
}
