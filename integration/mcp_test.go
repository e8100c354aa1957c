package integration

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lectern/lectern/internal/demo"
	"github.com/lectern/lectern/mcp"
	"github.com/lectern/lectern/vocab"
)

// mcpTAnonymousTools are the catalog tools anyone may use (DESIGN §10).
var mcpTAnonymousTools = []string{"get_course", "get_pricing", "get_site_info", "list_events", "search_courses"}

// mcpTDraftMarkers are the seeded unpublished items: none may appear in any
// public answer.
var mcpTDraftMarkers = []string{demo.DraftCourseSlug, "Advanced Distributed Systems", "Unreleased E-book", "unreleased-ebook",
	"Staff Planning", "staff-planning", "Unfinished: generics deep dive"}

func mcpTNoDrafts(t *testing.T, where, text string) {
	t.Helper()
	for _, m := range mcpTDraftMarkers {
		if strings.Contains(text, m) {
			t.Errorf("%s shows the unpublished %q:\n%s", where, m, text)
		}
	}
}

// Without a token the server lists the catalog tools only, and they answer
// with the seeded published catalog.
func TestMCPAnonymousCatalog(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, nil)
		cs := mcpTConnect(t, ts, ts.academy(), "")
		if got := mcpTToolNames(t, cs); !slices.Equal(got, mcpTAnonymousTools) {
			t.Fatalf("anonymous tools/list = %v; want %v", got, mcpTAnonymousTools)
		}
		if r := cs.InitializeResult(); r == nil || r.ServerInfo == nil || r.ServerInfo.Title != demo.AcademyName {
			t.Errorf("serverInfo %+v; want the site's name", r)
		}

		var search mcp.SearchCoursesOutput
		raw := mcpTCall(t, cs, "search_courses", nil, &search)
		mcpTNoDrafts(t, "search_courses", raw)
		var slugs []string
		for _, c := range search.Courses {
			slugs = append(slugs, c.Slug)
		}
		want := []string{"go-fundamentals", "web-security-essentials", "data-analysis-with-sql", "intro-to-machine-learning", "public-speaking-for-engineers"}
		if diff := cmp.Diff(want, slugs); diff != "" || search.Total != 5 || search.NextCursor != "" {
			t.Errorf("search_courses: total %d, next %q, slugs (-want +got):\n%s", search.Total, search.NextCursor, diff)
		}
		if got := search.Courses[0]; got.Money.Price != "49.00 USD" || got.PriceCents != 4900 || got.URL != ts.academy()+"/courses/go-fundamentals.md" {
			t.Errorf("first course %+v", got)
		}
		if !slices.Equal(search.Categories, []string{"Data", "Programming", "Security", "Soft skills"}) {
			t.Errorf("categories %v", search.Categories)
		}

		// Paging: two at a time, following next_cursor to the end.
		var paged []string
		cursor := ""
		for range 5 {
			var p mcp.SearchCoursesOutput
			args := map[string]any{"limit": 2}
			if cursor != "" {
				args["cursor"] = cursor
			}
			mcpTCall(t, cs, "search_courses", args, &p)
			for _, c := range p.Courses {
				paged = append(paged, c.Slug)
			}
			if cursor = p.NextCursor; cursor == "" {
				break
			}
		}
		if !slices.Equal(paged, want) {
			t.Errorf("paging by 2: %v; want %v", paged, want)
		}
		// The bound is part of the schema: a page of 51 is refused.
		if res, raw := mcpTCallRaw(t, cs, "search_courses", map[string]any{"limit": 51}); !res.IsError {
			t.Errorf("limit 51 accepted: %s", raw)
		}

		var data mcp.SearchCoursesOutput
		mcpTCall(t, cs, "search_courses", map[string]any{"category": "data"}, &data)
		if data.Total != 2 || len(data.Courses) != 2 {
			t.Errorf("category data: %+v", data)
		}
		var text mcp.SearchCoursesOutput
		raw = mcpTCall(t, cs, "search_courses", map[string]any{"query": "distributed"}, &text)
		if text.Total != 0 || len(text.Courses) != 0 {
			t.Errorf("a search for the draft's words found %s", raw)
		}

		var course mcp.CourseOutput
		raw = mcpTCall(t, cs, "get_course", map[string]any{"slug": "go-fundamentals"}, &course)
		mcpTNoDrafts(t, "get_course", raw)
		if course.Title != "Go Fundamentals" || course.Money.Price != "49.00 USD" || len(course.Lecturers) != 1 || course.Lecturers[0].Name != "Maya Chen" {
			t.Errorf("get_course: %+v", course)
		}
		var outline []string
		for _, s := range course.Sections {
			for _, l := range s.Lectures {
				outline = append(outline, s.Title+"/"+l.Title)
			}
		}
		wantOutline := []string{"Getting started/Installing Go", "Getting started/Your first program", "Concurrency/Goroutines and channels", "Concurrency/The context package"}
		if diff := cmp.Diff(wantOutline, outline); diff != "" || course.LectureCount != 4 || !course.Sections[0].Lectures[0].FreePreview {
			t.Errorf("outline (-want +got):\n%s", diff)
		}
		if res, raw := mcpTCallRaw(t, cs, "get_course", map[string]any{"slug": demo.DraftCourseSlug}); !res.IsError || strings.Contains(raw, "Advanced Distributed") {
			t.Errorf("get_course of the draft: %s", raw)
		}

		var events mcp.ListEventsOutput
		raw = mcpTCall(t, cs, "list_events", nil, &events)
		mcpTNoDrafts(t, "list_events", raw)
		if len(events.Events) != 2 || events.Events[0].Slug != "live-qa-go" || events.Events[1].Slug != "security-workshop" || events.Total != 2 {
			t.Errorf("list_events: %s", raw)
		}

		var pricing mcp.PricingOutput
		raw = mcpTCall(t, cs, "get_pricing", nil, &pricing)
		mcpTNoDrafts(t, "get_pricing", raw)
		if len(pricing.Courses) != 5 || len(pricing.MembershipPlans) != 1 || pricing.MembershipPlans[0].Money.Price != "19.00 USD" ||
			len(pricing.DigitalProducts) != 1 || len(pricing.ConsultingServices) != 1 || pricing.ConsultingServices[0].Sessions != 3 ||
			len(pricing.Events) != 2 || pricing.PricingURL != ts.academy()+"/pricing.md" {
			t.Errorf("get_pricing: %s", raw)
		}

		var info mcp.SiteInfoOutput
		raw = mcpTCall(t, cs, "get_site_info", nil, &info)
		mcpTNoDrafts(t, "get_site_info", raw)
		if info.Name != demo.AcademyName || info.Origin != ts.academy() || info.PublishedCourses != 5 || info.Access.SignedIn ||
			info.Links.AuthMD != ts.academy()+"/auth.md" || !slices.Equal(info.Access.Tools, []string{"search_courses", "get_course", "list_events", "get_pricing", "get_site_info"}) {
			t.Errorf("get_site_info: %s", raw)
		}

		// The other site is another server with its own catalog.
		open := mcpTConnect(t, ts, ts.open(), "")
		var openSearch mcp.SearchCoursesOutput
		mcpTCall(t, open, "search_courses", nil, &openSearch)
		if openSearch.Total != 2 || openSearch.Courses[0].Slug != "python-basics" || openSearch.Courses[0].Money.Price != "Free" {
			t.Errorf("Open School search_courses: %+v", openSearch)
		}
	})
}

// mcpTMemberTools are the tools of a member token with account:read and
// account:write.
var mcpTMemberTools = []string{"get_course", "get_pricing", "get_site_info", "list_events", "mark_notification_read",
	"my_course_progress", "my_enrollments", "my_notifications", "my_purchases", "search_courses"}

// With the demo student's token the member tools appear and answer with
// that student's data at that site only.
func TestMCPMemberTools(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, nil)
		tok := ts.studentToken(t, ts.academy())
		cs := mcpTConnect(t, ts, ts.academy(), tok.AccessToken)
		if got := mcpTToolNames(t, cs); !slices.Equal(got, mcpTMemberTools) {
			t.Fatalf("member tools/list = %v; want %v", got, mcpTMemberTools)
		}

		var enr mcp.MyEnrollmentsOutput
		raw := mcpTCall(t, cs, "my_enrollments", nil, &enr)
		mcpTNoDrafts(t, "my_enrollments", raw)
		if enr.Total != 2 || len(enr.Enrollments) != 2 {
			t.Fatalf("my_enrollments: %s", raw)
		}
		goE, secE := enr.Enrollments[0], enr.Enrollments[1]
		if goE.CourseSlug != "go-fundamentals" || !goE.HasLifetimeAccess || goE.ExpiresAt != "" || !goE.AccessActive ||
			goE.LastWatched == nil || goE.LastWatched.PositionSeconds != 754 || goE.LastWatched.Completed {
			t.Errorf("go-fundamentals enrollment: %+v", goE)
		}
		if secE.CourseSlug != "web-security-essentials" || secE.HasLifetimeAccess || secE.ExpiresAt == "" || !secE.AccessActive ||
			secE.LastWatched == nil || secE.LastWatched.PositionSeconds != 312 {
			t.Errorf("web-security-essentials enrollment: %+v", secE)
		}
		var page1, page2 mcp.MyEnrollmentsOutput
		mcpTCall(t, cs, "my_enrollments", map[string]any{"limit": 1}, &page1)
		mcpTCall(t, cs, "my_enrollments", map[string]any{"limit": 1, "cursor": page1.NextCursor}, &page2)
		if len(page1.Enrollments) != 1 || page1.NextCursor == "" || len(page2.Enrollments) != 1 || page2.NextCursor != "" ||
			page2.Enrollments[0].CourseSlug != "web-security-essentials" {
			t.Errorf("paging by 1: %+v then %+v", page1, page2)
		}

		var prog mcp.CourseProgressOutput
		mcpTCall(t, cs, "my_course_progress", map[string]any{"course_slug": "go-fundamentals"}, &prog)
		want := mcp.LectureProgressOutput{LectureID: goE.LastWatched.LectureID, LectureTitle: "Goroutines and channels", SectionTitle: "Concurrency",
			PositionSeconds: 754, DurationSeconds: 22 * 60, UpdatedAt: goE.LastWatched.UpdatedAt}
		if prog.LastWatched == nil || *prog.LastWatched != want || prog.PublishedLectures != 4 || prog.TotalDurationSeconds != 3600 || !prog.HasLifetimeAccess {
			t.Errorf("my_course_progress: %+v (last watched %+v)", prog, prog.LastWatched)
		}
		// "Installing Go" is completed; the next in curriculum order is not
		// the last watched one but the lecture skipped before it.
		wantNext := mcp.NextLectureOutput{LectureTitle: "Your first program", SectionTitle: "Getting started", DurationSeconds: 12 * 60}
		if prog.NextLecture != nil {
			wantNext.LectureID = prog.NextLecture.LectureID
		}
		if prog.CompletedLectures != 1 || prog.PercentComplete != 25 || prog.NextLecture == nil || *prog.NextLecture != wantNext ||
			prog.NextLecture.LectureID == want.LectureID {
			t.Errorf("my_course_progress completion: %d done, %d%%, next %+v", prog.CompletedLectures, prog.PercentComplete, prog.NextLecture)
		}
		if res, raw := mcpTCallRaw(t, cs, "my_course_progress", map[string]any{"course_slug": "python-basics"}); !res.IsError {
			t.Errorf("progress in an Open School course at Demo Academy: %s", raw)
		}

		var buys mcp.MyPurchasesOutput
		raw = mcpTCall(t, cs, "my_purchases", nil, &buys)
		for _, secret := range []string{"DA-100", "SPRING10", "partial", "refund", "invoice"} {
			if strings.Contains(raw, secret) {
				t.Errorf("my_purchases shows %q: %s", secret, raw)
			}
		}
		if buys.DigitalProducts == nil || len(buys.DigitalProducts.Items) != 1 || buys.DigitalProducts.Items[0].Slug != "go-cheat-sheet" ||
			buys.ConsultingServices == nil || len(buys.ConsultingServices.Items) != 1 || buys.ConsultingServices.Items[0].SessionsIncluded != 3 || buys.ConsultingServices.Items[0].SessionsUsed != 1 ||
			buys.EventRegistrations == nil || len(buys.EventRegistrations.Items) != 1 || buys.EventRegistrations.Items[0].EventSlug != "live-qa-go" {
			t.Errorf("my_purchases: %s", raw)
		}
		var events mcp.MyPurchasesOutput
		mcpTCall(t, cs, "my_purchases", map[string]any{"kind": "event_registrations"}, &events)
		if events.DigitalProducts != nil || events.ConsultingServices != nil || events.EventRegistrations == nil || events.EventRegistrations.Total != 1 {
			t.Errorf("my_purchases of one kind: %+v", events)
		}

		var notes mcp.MyNotificationsOutput
		mcpTCall(t, cs, "my_notifications", nil, &notes)
		var titles []string
		for _, n := range notes.Notifications {
			titles = append(titles, n.Title)
		}
		if diff := cmp.Diff([]string{"Welcome to Demo Academy", "Live Q&A in two weeks", "New lecture in Go Fundamentals"}, titles); diff != "" ||
			notes.Total != 3 || notes.UnreadCount != 2 || notes.Notifications[0].Read || !notes.Notifications[2].Read {
			t.Errorf("my_notifications (-want +got):\n%s\n%+v", diff, notes)
		}
		var unread mcp.MyNotificationsOutput
		mcpTCall(t, cs, "my_notifications", map[string]any{"unread_only": true}, &unread)
		if unread.Total != 2 || len(unread.Notifications) != 2 {
			t.Errorf("unread notifications: %+v", unread)
		}

		var marked mcp.MarkNotificationReadOutput
		id := notes.Notifications[0].ID
		mcpTCall(t, cs, "mark_notification_read", map[string]any{"id": id}, &marked)
		if !marked.Notification.Read || marked.Notification.ID != id || marked.UnreadCount != 1 {
			t.Errorf("mark_notification_read: %+v", marked)
		}
		mcpTCall(t, cs, "mark_notification_read", map[string]any{"id": id}, &marked)
		if marked.UnreadCount != 1 {
			t.Errorf("marking again changed the count: %+v", marked)
		}
		if res, raw := mcpTCallRaw(t, cs, "mark_notification_read", map[string]any{"id": 999999}); !res.IsError {
			t.Errorf("marking an unknown notification: %s", raw)
		}

		// The same person at the other site sees that site's data only.
		openCS := mcpTConnect(t, ts, ts.open(), ts.studentToken(t, ts.open()).AccessToken)
		var openEnr mcp.MyEnrollmentsOutput
		mcpTCall(t, openCS, "my_enrollments", nil, &openEnr)
		if openEnr.Total != 1 || openEnr.Enrollments[0].CourseSlug != "python-basics" || openEnr.Enrollments[0].LastWatched != nil {
			t.Errorf("Open School my_enrollments: %+v", openEnr)
		}
		var openNotes mcp.MyNotificationsOutput
		mcpTCall(t, openCS, "my_notifications", nil, &openNotes)
		var openBuys mcp.MyPurchasesOutput
		mcpTCall(t, openCS, "my_purchases", nil, &openBuys)
		if openNotes.Total != 0 || openBuys.DigitalProducts.Total != 0 || openBuys.ConsultingServices.Total != 0 || openBuys.EventRegistrations.Total != 0 {
			t.Errorf("Open School notifications %+v, purchases %+v", openNotes, openBuys)
		}
		if res, raw := mcpTCallRaw(t, openCS, "mark_notification_read", map[string]any{"id": id}); !res.IsError {
			t.Errorf("marking a Demo Academy notification at Open School: %s", raw)
		}

		// A token without account:write has no mark_notification_read;
		// calling it is 403 insufficient_scope naming what the tool needs
		// (it answers with the notification, so account:read as well).
		readOnly := ts.studentToken(t, ts.academy(), "openid", "account:read").AccessToken
		if got := mcpTToolNames(t, mcpTConnect(t, ts, ts.academy(), readOnly)); slices.Contains(got, "mark_notification_read") || !slices.Contains(got, "my_notifications") {
			t.Errorf("account:read tools: %v", got)
		}
		code, hdr, body := mcpTPost(t, ts, ts.academy(), readOnly, mcpTToolCall("mark_notification_read", map[string]any{"id": id}))
		mcpTWantChallenge(t, ts.academy(), code, hdr, body, 403, "insufficient_scope", "account:read account:write")
		// account:write alone reads nothing: no member tool at all.
		writeOnly := ts.studentToken(t, ts.academy(), "account:write").AccessToken
		if got := mcpTToolNames(t, mcpTConnect(t, ts, ts.academy(), writeOnly)); slices.ContainsFunc(got, func(n string) bool {
			return strings.HasPrefix(n, "my_") || n == "mark_notification_read"
		}) {
			t.Errorf("account:write tools: %v", got)
		}
		code, hdr, body = mcpTPost(t, ts, ts.academy(), writeOnly, mcpTToolCall("mark_notification_read", map[string]any{"id": id}))
		mcpTWantChallenge(t, ts.academy(), code, hdr, body, 403, "insufficient_scope", "account:read account:write")
	})
}

// mcpTWantChallenge checks a 401/403 answer of /mcp: status, error, the
// scope named in WWW-Authenticate and the resource_metadata pointer.
func mcpTWantChallenge(t *testing.T, origin string, code int, hdr http.Header, body string, wantCode int, wantErr, wantScope string) {
	t.Helper()
	www := hdr.Get("WWW-Authenticate")
	if code != wantCode || !strings.HasPrefix(www, "Bearer ") || !strings.Contains(www, `error="`+wantErr+`"`) ||
		!strings.Contains(www, `resource_metadata="`+origin+vocab.ProtectedResourcePath+`"`) {
		t.Errorf("status %d, WWW-Authenticate %q; want %d %s with resource_metadata; body %s", code, www, wantCode, wantErr, body)
	}
	if wantScope != "" && !strings.Contains(www, `scope="`+wantScope+`"`) {
		t.Errorf("WWW-Authenticate %q does not name scope %q", www, wantScope)
	}
	var e oauthError
	if err := json.Unmarshal([]byte(body), &e); err != nil || e.Error != wantErr {
		t.Errorf("body %s; want error %s", body, wantErr)
	}
}

// An operator token shows the operator tools its scopes allow; the others
// are absent and calling them is 403 insufficient_scope with scope=.
func TestMCPOperatorTools(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, nil)
		tok := ts.ownerToken(t, ts.academy(), "courses:read", "students:read").AccessToken
		cs := mcpTConnect(t, ts, ts.academy(), tok)
		want := append(slices.Clone(mcpTAnonymousTools), "list_courses", "list_students")
		slices.Sort(want)
		if got := mcpTToolNames(t, cs); !slices.Equal(got, want) {
			t.Fatalf("operator tools/list = %v; want %v", got, want)
		}

		var courses mcp.ListCoursesOutput
		raw := mcpTCall(t, cs, "list_courses", nil, &courses)
		if courses.Total != 6 || len(courses.Courses) != 6 || !strings.Contains(raw, demo.DraftCourseSlug) {
			t.Errorf("list_courses (drafts included by default): %s", raw)
		}
		for _, c := range courses.Courses {
			if (c.Slug == demo.DraftCourseSlug) != (c.Status == "draft") || (c.Status == "draft") != (c.PublishedAt == "") {
				t.Errorf("course %+v", c)
			}
		}
		var published mcp.ListCoursesOutput
		raw = mcpTCall(t, cs, "list_courses", map[string]any{"include_drafts": false}, &published)
		if published.Total != 5 || strings.Contains(raw, demo.DraftCourseSlug) {
			t.Errorf("list_courses without drafts: %s", raw)
		}

		var students mcp.ListStudentsOutput
		mcpTCall(t, cs, "list_students", nil, &students)
		if students.Total != 1 || students.Students[0].Email != demo.StudentEmail || students.Students[0].Enrollments != 2 || students.Students[0].Name != "Sam Student" {
			t.Errorf("list_students: %+v", students)
		}
		var none mcp.ListStudentsOutput
		mcpTCall(t, cs, "list_students", map[string]any{"search": "nobody-like-this"}, &none)
		if none.Total != 0 || len(none.Students) != 0 {
			t.Errorf("list_students search: %+v", none)
		}

		for _, c := range []struct{ tool, scope string }{
			{"recent_orders", "orders:read"}, {"sales_summary", "analytics:read"}, {"my_enrollments", "account:read"},
		} {
			code, hdr, body := mcpTPost(t, ts, ts.academy(), tok, mcpTToolCall(c.tool, nil))
			mcpTWantChallenge(t, ts.academy(), code, hdr, body, 403, "insufficient_scope", c.scope)
		}
		// The go-sdk client sees the refusal as an error of the call.
		if _, err := cs.CallTool(context.Background(), &gomcp.CallToolParams{Name: "recent_orders", Arguments: map[string]any{}}); err == nil || !strings.Contains(err.Error(), "Forbidden") {
			t.Errorf("recent_orders through the SDK client: %v", err)
		}

		// With orders:read and analytics:read the other tools appear.
		full := mcpTConnect(t, ts, ts.academy(), ts.ownerToken(t, ts.academy(), "orders:read", "analytics:read").AccessToken)
		names := mcpTToolNames(t, full)
		if !slices.Contains(names, "recent_orders") || !slices.Contains(names, "sales_summary") || slices.Contains(names, "list_courses") {
			t.Errorf("orders:read analytics:read tools: %v", names)
		}
		var orders mcp.RecentOrdersOutput
		mcpTCall(t, full, "recent_orders", map[string]any{"limit": 3}, &orders)
		var numbers []string
		for _, o := range orders.Orders {
			numbers = append(numbers, o.Number)
		}
		if !slices.Equal(numbers, []string{"DA-1004", "DA-1003", "DA-1002"}) || orders.Total != 4 || orders.NextCursor == "" ||
			orders.Orders[0].RefundStatus != "partial" || orders.Orders[2].CouponCode != "SPRING10" || orders.Orders[0].CustomerEmail != demo.StudentEmail ||
			len(orders.Orders[0].Items) != 1 || orders.Orders[0].Items[0].Kind != "consulting_service" || orders.Orders[0].Total != "150.00 USD" {
			t.Errorf("recent_orders: %+v", orders)
		}
		var rest mcp.RecentOrdersOutput
		mcpTCall(t, full, "recent_orders", map[string]any{"limit": 3, "cursor": orders.NextCursor}, &rest)
		if len(rest.Orders) != 1 || rest.Orders[0].Number != "DA-1001" || rest.NextCursor != "" {
			t.Errorf("recent_orders page 2: %+v", rest)
		}
		var sales mcp.SalesSummaryOutput
		mcpTCall(t, full, "sales_summary", map[string]any{"days": 90}, &sales)
		if sales.Orders != 4 || sales.RevenueCents != 27910 || sales.Revenue != "279.10 USD" || sales.RefundedOrders != 1 || sales.NewEnrollments != 2 || sales.Currency != "USD" {
			t.Errorf("sales_summary 90 days: %+v", sales)
		}
		mcpTCall(t, full, "sales_summary", map[string]any{"days": 15}, &sales)
		if sales.Orders != 1 || sales.RevenueCents != 15000 {
			t.Errorf("sales_summary 15 days: %+v", sales)
		}
		// A day without orders made an amount of nothing, in the catalog's
		// currency, not the price label "Free".
		var quiet mcp.SalesSummaryOutput
		mcpTCall(t, full, "sales_summary", map[string]any{"days": 1}, &quiet)
		if quiet.Orders != 0 || quiet.RevenueCents != 0 || quiet.Revenue != "0.00 USD" || quiet.Currency != "USD" {
			t.Errorf("sales_summary 1 day: %+v", quiet)
		}

		// Roles are checked per request: once the owner's role is gone, the
		// token's operator scopes no longer count.
		owner, err := ts.app.Store.UserByEmail(context.Background(), demo.OwnerEmail)
		if err != nil {
			t.Fatal(err)
		}
		academy, err := ts.app.Store.SiteBySlug(context.Background(), demo.AcademySlug)
		if err != nil {
			t.Fatal(err)
		}
		if err := func() error {
			_, err := ts.app.Platform.RevokeRole(context.Background(), academy.ID, owner.Email, "owner")
			return err
		}(); err != nil {
			t.Fatal(err)
		}
		if got := mcpTToolNames(t, mcpTConnect(t, ts, ts.academy(), tok)); !slices.Equal(got, mcpTAnonymousTools) {
			t.Errorf("tools of a former owner: %v", got)
		}
		code, hdr, body := mcpTPost(t, ts, ts.academy(), tok, mcpTToolCall("list_students", nil))
		mcpTWantChallenge(t, ts.academy(), code, hdr, body, 403, "insufficient_scope", "students:read")
		if !strings.Contains(body, "role") {
			t.Errorf("the refusal does not say the role is missing: %s", body)
		}
	})
}

// At Open School the operator tools see Open School's courses only.
func TestMCPOperatorToolsPerSite(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	cs := mcpTConnect(t, ts, ts.open(), ts.ownerToken(t, ts.open(), "courses:read").AccessToken)
	var courses mcp.ListCoursesOutput
	raw := mcpTCall(t, cs, "list_courses", nil, &courses)
	if courses.Total != 2 || strings.Contains(raw, "go-fundamentals") {
		t.Errorf("Open School list_courses: %s", raw)
	}
}

// An Authorization header that does not carry a valid token of this site
// is 401 invalid_token with resource_metadata, never anonymous service.
func TestMCPInvalidTokens(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, nil)
		list := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`
		other := ts.studentToken(t, ts.open()).AccessToken
		revoked := ts.studentToken(t, ts.academy())
		if code, _, body := ts.postForm(t, ts.academy()+vocab.RevocationPath, url.Values{"token": {revoked.AccessToken}, "client_id": {demo.MemberClientID}}); code != 200 {
			t.Fatalf("revocation: %d %v", code, body)
		}
		for _, c := range []struct{ name, authorization string }{
			{"garbage", "Bearer not-a-token"},
			{"other site's token", "Bearer " + other},
			{"revoked token", "Bearer " + revoked.AccessToken},
			{"malformed", "Bearer a b c"},
			{"another scheme", "Basic dXNlcjpwYXNz"},
			{"empty", ""},
		} {
			t.Run(c.name, func(t *testing.T) {
				code, hdr, body := mcpTPost(t, ts, ts.academy(), "", list, "Authorization", c.authorization)
				mcpTWantChallenge(t, ts.academy(), code, hdr, body, 401, "invalid_token", "")
			})
		}
		// The same for the go-sdk client: it cannot even connect.
		client := gomcp.NewClient(&gomcp.Implementation{Name: "t", Version: "1"}, nil)
		if _, err := client.Connect(context.Background(), &gomcp.StreamableClientTransport{
			Endpoint: ts.academy() + vocab.MCPPath, HTTPClient: mcpTHTTPClient(ts, other), MaxRetries: -1,
		}, nil); err == nil {
			t.Error("the SDK client connected with another site's token")
		}
		// No Authorization header at all: anonymous.
		if code, _, body := mcpTPost(t, ts, ts.academy(), "", list); code != 200 || !strings.Contains(body, "search_courses") || strings.Contains(body, "my_enrollments") {
			t.Errorf("anonymous tools/list: %d %s", code, body)
		}
	})
}

// Without a token, a member or operator tool is not listed, and calling it
// answers 401 with resource_metadata and the scope to ask for, which starts
// an MCP client's authorization.
func TestMCPAnonymousCallOfProtectedTool(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	for _, c := range []struct{ tool, scope string }{
		{"my_enrollments", "account:read"}, {"mark_notification_read", "account:read account:write"}, {"list_students", "students:read"},
	} {
		code, hdr, body := mcpTPost(t, ts, ts.open(), "", mcpTToolCall(c.tool, nil))
		mcpTWantChallenge(t, ts.open(), code, hdr, body, 401, "invalid_token", c.scope)
	}
	// An unknown tool is the SDK's JSON-RPC error, not a challenge.
	code, hdr, body := mcpTPost(t, ts, ts.open(), "", mcpTToolCall("no_such_tool", nil))
	if code == 401 || code == 403 || hdr.Get("WWW-Authenticate") != "" || !strings.Contains(body, "no_such_tool") {
		t.Errorf("unknown tool: %d %q %s", code, hdr.Get("WWW-Authenticate"), body)
	}
	// The example of /auth.md works as written, with a token.
	tok := ts.studentToken(t, ts.open()).AccessToken
	code, _, body = mcpTPost(t, ts, ts.open(), tok, `{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "my_enrollments", "arguments": {"limit": 5}}}`)
	if code != 200 || !strings.Contains(body, "python-basics") {
		t.Errorf("the auth.md example: %d %s", code, body)
	}
}

// Browsers on other origins are refused (DNS rebinding); the site's own
// origin and requests without Origin are served.
func TestMCPOriginValidation(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`
	for _, c := range []struct {
		origin string
		want   int
	}{
		{"", 200},
		{ts.academy(), 200},
		{strings.ToUpper(ts.academy()), 200},
		{"http://evil.example", 403},
		{"https://" + strings.TrimPrefix(ts.academy(), "http://"), 403},
		{ts.open(), 403},
		{"null", 403},
		{"http://localhost", 403},
	} {
		var hdr []string
		if c.origin != "" {
			hdr = []string{"Origin", c.origin}
		}
		code, h, body := mcpTPost(t, ts, ts.academy(), "", list, hdr...)
		if code != c.want {
			t.Errorf("Origin %q: %d; want %d (%s)", c.origin, code, c.want, body)
		}
		if c.want == 403 {
			var e oauthError
			if json.Unmarshal([]byte(body), &e) != nil || e.Error != "invalid_origin" || !strings.HasPrefix(h.Get("Content-Type"), "application/json") {
				t.Errorf("Origin %q: refusal %q %s; want JSON invalid_origin", c.origin, h.Get("Content-Type"), body)
			}
		}
	}
	// A foreign origin is refused before the token is looked at.
	tok := ts.studentToken(t, ts.academy()).AccessToken
	if code, _, _ := mcpTPost(t, ts, ts.academy(), tok, list, "Origin", "http://evil.example"); code != 403 {
		t.Errorf("foreign Origin with a token: %d", code)
	}
}

// A plain GET of /mcp (the link in llms.txt) describes the endpoint; an
// MCP client asking for an event stream gets 405 (no sessions).
func TestMCPGet(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	code, hdr, body := ts.get(t, ts.academy(), vocab.MCPPath)
	if code != 200 || hdr.Get("Content-Type") != "text/markdown; charset=utf-8" || !strings.Contains(string(body), demo.AcademyName) || !strings.Contains(string(body), "my_enrollments") {
		t.Errorf("GET /mcp: %d %q %s", code, hdr.Get("Content-Type"), body)
	}
	if code, _, _ := ts.get(t, ts.academy(), vocab.MCPPath, "Accept", "text/event-stream"); code != http.StatusMethodNotAllowed {
		t.Errorf("GET /mcp for an event stream: %d; want 405", code)
	}
	if code, _, _ := ts.get(t, ts.academy(), vocab.MCPPath, "Authorization", "Bearer nope"); code != 401 {
		t.Errorf("GET /mcp with a bad token: %d; want 401", code)
	}
}
