package integration

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/lectern/lectern/authserver/scope"
	"github.com/lectern/lectern/internal/demo"
	"github.com/lectern/lectern/storage"
)

// Malformed requests are 400, invalid fields 422 naming the field, unknown
// ids 404, conflicts 409: all RFC 9457 problem documents.
func TestAdminValidationNotFoundConflict(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, nil)
		tok := admOwnerToken(t, ts, ts.academy(), scope.OperatorScopes()...)
		do := func(method, path string, body any) admResp {
			t.Helper()
			return admDo(t, ts, method, ts.academy(), path, tok, body)
		}
		id := func(m map[string]any) string { return strconv.FormatInt(admID(t, m, "id"), 10) }

		// 400: the request itself is malformed.
		admProblem(t, do(http.MethodPost, "/courses", []byte(`{"slug": "x",`)), 400, "", "truncated JSON")
		admProblem(t, do(http.MethodPost, "/courses", []byte(`{"slug": "x", "title": 5}`)), 400, "title", "a number for a string")
		admProblem(t, do(http.MethodGet, "/courses?limit=1000", nil), 400, "limit", "limit above 100")
		admProblem(t, do(http.MethodGet, "/courses?limit=zero", nil), 400, "limit", "limit not a number")
		admProblem(t, do(http.MethodGet, "/courses?cursor=bm90LWEtY3Vyc29y", nil), 400, "cursor", "a cursor we never gave out")
		admProblem(t, do(http.MethodGet, "/courses/abc", nil), 400, "courseId", "a non-numeric id")
		admProblem(t, do(http.MethodGet, "/analytics/sales?from=yesterday", nil), 400, "from", "a from that is not a date-time")
		admProblem(t, do(http.MethodGet, "/analytics/sales?from=2020-01-01T00:00:00Z&to=2030-01-01T00:00:00Z", nil), 400, "to", "a period over 366 days")
		admProblem(t, do(http.MethodGet, "/analytics/sales?from=2030-01-02T00:00:00Z&to=2030-01-01T00:00:00Z", nil), 400, "to", "a period that ends before it starts")
		admProblem(t, admDo(t, ts, http.MethodPost, ts.academy(), "/courses", tok, []byte(`slug=x`), "Content-Type", "application/x-www-form-urlencoded"), 415, "", "a form body")
		admProblem(t, admDo(t, ts, http.MethodPost, ts.academy(), "/courses", tok, []byte{}), 400, "body", "an empty body")
		// Null where the schema does not allow it is refused, not read as
		// "left out": the PATCH would answer 200 having changed nothing.
		admProblem(t, do(http.MethodPatch, "/courses/1", []byte(`{"title":null}`)), 400, "title", "a null title")
		admProblem(t, do(http.MethodPost, "/courses", []byte(`{"slug":"null-price","title":"T","priceCents":null}`)), 400, "priceCents", "a null price")
		admProblem(t, do(http.MethodPatch, "/courses/1", []byte(`null`)), 400, "body", "a body of null")
		admProblem(t, do(http.MethodPatch, "/courses/1", []byte(`[{"title":"x"}]`)), 400, "body", "an array body")
		// Text that would not read back as sent is refused, not mangled.
		admProblem(t, admDo(t, ts, http.MethodPost, ts.academy(), "/courses", tok, []byte("{\"slug\":\"bad-utf8\",\"title\":\"\xff\xfe\"}")), 400, "body", "a title that is not UTF-8")
		admProblem(t, admDo(t, ts, http.MethodPost, ts.academy(), "/courses", tok, []byte(`{"slug":"lone-surrogate","title":"a\ud800"}`)), 400, "body", "a title with a lone surrogate")
		admDo(t, ts, http.MethodPost, ts.academy(), "/courses", tok, []byte(`{"slug":"emoji-title","title":"Go \ud83d\ude00 ü"}`)).want(t, 201, "a title with an escaped surrogate pair")
		// Media types are case-insensitive (RFC 9110 §8.3.1).
		admDo(t, ts, http.MethodPost, ts.academy(), "/courses", tok, []byte(`{"slug":"upper-case-type","title":"T"}`), "Content-Type", "APPLICATION/JSON; Charset=UTF-8").want(t, 201, "a body sent as APPLICATION/JSON")
		admProblem(t, admDo(t, ts, http.MethodPost, ts.academy(), "/courses", tok, []byte(`{"slug":"one","title":"T","slug":"two"}`)), 400, "slug", "a member twice")
		// Decoder failures name the body, never Go's types or layouts.
		for _, bad := range []string{`{"code":"EXP5","percentOff":10,"expiresAt":"tomorrow"}`, `{"code":"EXP5","percentOff":10,"expiresAt":5}`,
			`{"code":"EXP5","percentOff":10,"expiresAt":"2026-02-30T00:00:00Z"}`} {
			r := admDo(t, ts, http.MethodPost, ts.academy(), "/coupons", tok, []byte(bad))
			admProblem(t, r, 400, "body", "a bad date-time")
			for _, leak := range []string{"2006-01-02", "UnmarshalJSON", "parsing time", "Go struct"} {
				if strings.Contains(string(r.body), leak) {
					t.Errorf("%s: the problem shows %q: %s", bad, leak, r.body)
				}
			}
		}

		// 422: the fields are wrong, and the problem names each.
		p := admProblem(t, do(http.MethodPost, "/courses", map[string]any{"slug": "Bad Slug", "title": " ", "currency": "usd", "imageUrl": "javascript:alert(1)"}), 422, "slug", "a bad course")
		for _, f := range []string{"title", "currency", "imageUrl"} {
			if !strings.Contains(string(mustJSON(p["errors"])), `"field":"`+f+`"`) {
				t.Errorf("the problem %v does not name %s", p, f)
			}
		}
		admProblem(t, do(http.MethodPost, "/events", map[string]any{"slug": "e", "title": "E", "startsAt": "2030-01-01T10:00:00Z", "endsAt": "2030-01-01T09:00:00Z"}), 422, "endsAt", "an event that ends before it starts")
		admProblem(t, do(http.MethodPost, "/coupons", map[string]any{"code": "TEN", "percentOff": 10, "amountOffCents": 500}), 422, "percentOff", "a coupon with two discounts")
		// Date-times the API could not print back (past 9999 in UTC, an
		// offset included) or that no course site means (before 1970) are
		// refused before anything is stored, and the lists still answer; a
		// required one left out or null is named.
		admProblem(t, do(http.MethodPost, "/events", map[string]any{"slug": "y10k", "title": "E", "startsAt": "9999-12-31T23:59:59Z"}), 422, "startsAt", "an event in year 9999's last hour")
		admProblem(t, do(http.MethodPost, "/events", map[string]any{"slug": "y0", "title": "E", "startsAt": "0000-01-01T00:00:00Z"}), 422, "startsAt", "an event in year 0")
		admProblem(t, do(http.MethodPost, "/events", map[string]any{"slug": "nostart", "title": "E"}), 422, "startsAt", "an event without startsAt")
		admProblem(t, do(http.MethodPost, "/events", map[string]any{"slug": "nullstart", "title": "E", "startsAt": nil}), 400, "startsAt", "an event with a null startsAt")
		admProblem(t, do(http.MethodPost, "/coupons", map[string]any{"code": "Y10K5", "percentOff": 5, "expiresAt": "9999-12-31T23:00:00-05:00"}), 422, "expiresAt", "a coupon expiring in year 10000 UTC")
		admProblem(t, do(http.MethodGet, "/analytics/sales?from=9999-12-01T00:00:00Z&to=9999-12-31T23:00:00-05:00", nil), 400, "to", "a period ending in year 10000 UTC")
		for _, path := range []string{"/events", "/coupons"} {
			page := do(http.MethodGet, path+"?limit=100", nil).want(t, 200, "GET "+path+" after the refused dates")
			for _, slug := range []string{"y10k", "y0", "nostart", "nullstart", "Y10K5"} {
				if strings.Contains(string(page.body), `"`+slug+`"`) {
					t.Errorf("GET %s lists %s, whose create was refused", path, slug)
				}
			}
		}
		admProblem(t, do(http.MethodPost, "/coupons", map[string]any{"code": "x", "percentOff": 10}), 422, "code", "a short coupon code")
		admProblem(t, do(http.MethodPost, "/coupons", map[string]any{"code": "ZERO5", "amountOffCents": 0}), 422, "amountOffCents", "an amount off of 0")
		admProblem(t, do(http.MethodPost, "/coupons", map[string]any{"code": "ZERO6", "percentOff": 0}), 422, "percentOff", "a percent off of 0")
		admProblem(t, do(http.MethodPut, "/appearance", map[string]any{"primaryColor": "red", "accentColor": "#000000", "backgroundColor": "#ffffff", "textColor": "#000000"}), 422, "primaryColor", "a colour name")
		admProblem(t, do(http.MethodPatch, "/school", map[string]any{"registrationVariant": "B"}), 422, "registrationVariant", "changing the registration variant")
		admProblem(t, do(http.MethodPatch, "/school", map[string]any{"locale": "english!"}), 422, "locale", "a bad locale")
		admProblem(t, do(http.MethodPost, "/enrollments", map[string]any{"email": "nobody@demo.test", "courseId": 1}), 422, "email", "enrolling an unknown person")
		admProblem(t, do(http.MethodPost, "/members", map[string]any{"email": demo.OutsiderEmail, "role": "superuser"}), 422, "role", "an unknown role")
		admProblem(t, do(http.MethodPost, "/oauth-applications", map[string]any{"name": "App", "redirectUris": []string{"http://example.com/cb"}}), 422, "redirectUris", "a non-loopback http redirect")
		admProblem(t, do(http.MethodPost, "/oauth-applications", map[string]any{"name": "", "redirectUris": []string{"https://app.example/cb"}}), 422, "name", "an application without a name")

		// 404: ids that do not exist here.
		for _, path := range []string{"/courses/999999", "/events/999999", "/coupons/999999", "/orders/999999", "/students/usr_nobody",
			"/members/usr_nobody", "/files/999999", "/forms/999999/submissions", "/courses/999999/curriculum", "/oauth-applications/lct_nothing"} {
			admProblem(t, do(http.MethodGet, path, nil), 404, "", "GET "+path)
		}
		admProblem(t, do(http.MethodPatch, "/posts/999999", map[string]any{"title": "x"}), 404, "", "PATCH an unknown post")
		admProblem(t, do(http.MethodDelete, "/pages/999999", nil), 404, "", "DELETE an unknown page")
		admProblem(t, do(http.MethodPost, "/sections/999999/lectures", map[string]any{"title": "x"}), 404, "", "a lecture in an unknown section")

		// 409: conflicts with what exists.
		admProblem(t, do(http.MethodPost, "/courses", map[string]any{"slug": "go-fundamentals", "title": "Again"}), 409, "slug", "a taken course slug")
		c := do(http.MethodPost, "/courses", map[string]any{"slug": "second", "title": "Second"}).want(t, 201, "create").obj(t)
		admProblem(t, do(http.MethodPatch, "/courses/"+id(c), map[string]any{"slug": "go-fundamentals"}), 409, "slug", "renaming to a taken slug")
		do(http.MethodPost, "/coupons", map[string]any{"code": "SAVE10", "percentOff": 10}).want(t, 201, "create coupon")
		admProblem(t, do(http.MethodPost, "/coupons", map[string]any{"code": "save10", "amountOffCents": 100}), 409, "code", "the same code in lower case")
		var goCourse map[string]any
		var list struct{ Items []map[string]any }
		do(http.MethodGet, "/courses", nil).want(t, 200, "list").json(t, &list)
		for _, it := range list.Items {
			if it["slug"] == "go-fundamentals" {
				goCourse = it
			}
		}
		admProblem(t, do(http.MethodDelete, "/courses/"+id(goCourse), nil), 409, "", "deleting a course with enrollments")
		sec := do(http.MethodPost, "/courses/"+id(c)+"/sections", map[string]any{"title": "S"}).want(t, 201, "section").obj(t)
		do(http.MethodPost, "/sections/"+id(sec)+"/lectures", map[string]any{"title": "L"}).want(t, 201, "lecture")
		admProblem(t, do(http.MethodDelete, "/sections/"+id(sec), nil), 409, "", "deleting a section with lectures")
		admProblem(t, do(http.MethodPut, "/courses/"+id(c)+"/curriculum", map[string]any{"sections": []map[string]any{{"sectionId": admID(t, sec, "id"), "lectureIds": []int64{}}}}), 422, "sections", "a reorder that leaves out a lecture")
		plan := do(http.MethodPost, "/membership-plans", map[string]any{"slug": "yearly", "title": "Yearly", "interval": "year"}).want(t, 201, "plan").obj(t)
		sub := do(http.MethodPost, "/subscriptions", map[string]any{"email": demo.StudentEmail, "planId": admID(t, plan, "id"), "currentPeriodEnd": "2031-01-01T00:00:00Z"}).want(t, 201, "subscribe").obj(t)
		admProblem(t, do(http.MethodDelete, "/membership-plans/"+id(plan), nil), 409, "", "deleting a plan with subscriptions")
		do(http.MethodPost, "/subscriptions/"+id(sub)+"/cancel", nil).want(t, 200, "cancel")
		admProblem(t, do(http.MethodPost, "/subscriptions/"+id(sub)+"/cancel", nil), 409, "", "cancelling twice")
		enr := map[string]any{"email": demo.OutsiderEmail, "courseId": admID(t, c, "id")}
		do(http.MethodPost, "/enrollments", enr).want(t, 201, "enroll")
		admProblem(t, do(http.MethodPost, "/enrollments", enr), 409, "", "enrolling twice")
	})
}

// A POST with an Idempotency-Key runs once: a retry gets the first answer
// again, the same key with another body is 422, and keys are per person.
func TestAdminIdempotentRetries(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, nil)
		academy, _ := admSites(t, ts)
		tok := admOwnerToken(t, ts, ts.academy(), "courses:read", "courses:write", "students:write")
		count := func() float64 {
			return admDo(t, ts, http.MethodGet, ts.academy(), "/courses", tok, nil).want(t, 200, "list").obj(t)["totalCount"].(float64)
		}
		before := count()
		body := map[string]any{"slug": "retried", "title": "Retried"}
		first := admDo(t, ts, http.MethodPost, ts.academy(), "/courses", tok, body, "Idempotency-Key", "key-1").want(t, http.StatusCreated, "first")
		again := admDo(t, ts, http.MethodPost, ts.academy(), "/courses", tok, body, "Idempotency-Key", "key-1").want(t, http.StatusCreated, "retry")
		if string(first.body) != string(again.body) || again.header.Get("Idempotent-Replayed") != "true" || first.header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("retry answer differs or is not marked:\n%s\n%s\n%v", first.body, again.body, again.header)
		}
		if got := count(); got != before+1 {
			t.Fatalf("%v courses after a retried create; want %v", got, before+1)
		}
		p := admProblem(t, admDo(t, ts, http.MethodPost, ts.academy(), "/courses", tok, map[string]any{"slug": "other", "title": "Other"}, "Idempotency-Key", "key-1"),
			http.StatusUnprocessableEntity, "Idempotency-Key", "the key with another body")
		if p["type"] != "urn:lectern:problem:idempotency-key-reused" {
			t.Fatalf("problem type %v", p["type"])
		}
		// What the body says counts, not its bytes: members in another
		// order and other spacing are the same request.
		r1 := admDo(t, ts, http.MethodPost, ts.academy(), "/courses", tok, []byte(`{"slug":"reordered","title":"R"}`), "Idempotency-Key", "key-3").
			want(t, http.StatusCreated, "first, compact")
		r2 := admDo(t, ts, http.MethodPost, ts.academy(), "/courses", tok, []byte(`{ "title": "R",
			"slug": "reordered" }`), "Idempotency-Key", "key-3")
		if r2.status != http.StatusCreated || r2.header.Get("Idempotent-Replayed") != "true" || string(r1.body) != string(r2.body) {
			t.Fatalf("a retry with the members reordered: %d %v %s", r2.status, r2.header, r2.body)
		}
		// A body of two JSON values is refused whole, never half done.
		n := count()
		admProblem(t, admDo(t, ts, http.MethodPost, ts.academy(), "/courses", tok, []byte(`{"slug":"twice","title":"T"} {"x":1}`)), 400, "body", "two JSON values")
		if count() != n {
			t.Fatal("a body of two JSON values created a course")
		}
		// A retried upload is the same request although every attempt
		// draws a new multipart boundary.
		files := admOwnerToken(t, ts, ts.academy(), "storage:write")
		u1 := admUpload(t, ts, ts.academy(), files, "logo.png", "image/png", admPNG, "Idempotency-Key", "up-1").want(t, http.StatusCreated, "upload")
		u2 := admUpload(t, ts, ts.academy(), files, "logo.png", "image/png", admPNG, "Idempotency-Key", "up-1")
		if u2.status != http.StatusCreated || u2.header.Get("Idempotent-Replayed") != "true" || string(u1.body) != string(u2.body) {
			t.Fatalf("a retried upload: %d %v %s", u2.status, u2.header, u2.body)
		}
		admProblem(t, admUpload(t, ts, ts.academy(), files, "other.png", "image/png", admPNG, "Idempotency-Key", "up-1"),
			http.StatusUnprocessableEntity, "Idempotency-Key", "the key with another file name")

		// An answer that was an error is given again too.
		bad := map[string]any{"slug": "Not A Slug", "title": "x"}
		e1 := admDo(t, ts, http.MethodPost, ts.academy(), "/courses", tok, bad, "Idempotency-Key", "key-2")
		admProblem(t, e1, 422, "slug", "an invalid create")
		e2 := admDo(t, ts, http.MethodPost, ts.academy(), "/courses", tok, bad, "Idempotency-Key", "key-2")
		if e2.status != 422 || e2.header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("retry of an invalid create: %d %v", e2.status, e2.header)
		}
		// A retried enrollment is the first answer, not a 409.
		enr := map[string]any{"email": demo.OutsiderEmail, "courseId": admID(t, first.obj(t), "id")}
		admDo(t, ts, http.MethodPost, ts.academy(), "/enrollments", tok, enr, "Idempotency-Key", "enroll-1").want(t, 201, "enroll")
		admDo(t, ts, http.MethodPost, ts.academy(), "/enrollments", tok, enr, "Idempotency-Key", "enroll-1").want(t, 201, "enroll retried")
		// Keys belong to their person: the lecturer's key-1 is their own.
		lect := admOperatorToken(t, ts, ts.academy(), demo.LecturerEmail, demo.LecturerPassword, "courses:write")
		admDo(t, ts, http.MethodPost, ts.academy(), "/courses", lect, map[string]any{"slug": "lecturers", "title": "L"}, "Idempotency-Key", "key-1").
			want(t, http.StatusCreated, "the lecturer's own key-1")
		admProblem(t, admDo(t, ts, http.MethodPost, ts.academy(), "/courses", tok, body, "Idempotency-Key", strings.Repeat("k", 256)), 400, "Idempotency-Key", "an over-long key")

		created := 0
		for _, e := range admAudit(t, ts, *academy) {
			if e.Action == "course.created" && e.Target == "course:"+strconv.FormatInt(admID(t, first.obj(t), "id"), 10) {
				created++
			}
		}
		if created != 1 {
			t.Fatalf("%d course.created events for the retried create; want 1", created)
		}
	})
}

// No operation reads or changes another site's rows: every id of Open
// School is 404 at Demo Academy, for reads, changes and deletes, and ids in
// bodies are refused; the rows are unchanged afterwards.
func TestAdminOtherSitesIDs(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, nil)
		_, open := admSites(t, ts)
		openTok := admOwnerToken(t, ts, ts.open(), scope.OperatorScopes()...)
		tok := admOwnerToken(t, ts, ts.academy(), scope.OperatorScopes()...)
		mk := func(path string, body any) map[string]any {
			t.Helper()
			return admDo(t, ts, http.MethodPost, ts.open(), path, openTok, body).want(t, http.StatusCreated, "create at Open School "+path).obj(t)
		}
		s := func(m map[string]any) string { return strconv.FormatInt(admID(t, m, "id"), 10) }
		course := mk("/courses", map[string]any{"slug": "open-only", "title": "Open only"})
		section := mk("/courses/"+s(course)+"/sections", map[string]any{"title": "S"})
		lecture := mk("/sections/"+s(section)+"/lectures", map[string]any{"title": "L"})
		plan := mk("/membership-plans", map[string]any{"slug": "open-plan", "title": "P", "interval": "month"})
		enrollment := mk("/enrollments", map[string]any{"email": demo.StudentEmail, "courseId": admID(t, course, "id")})
		subscription := mk("/subscriptions", map[string]any{"email": demo.StudentEmail, "planId": admID(t, plan, "id"), "currentPeriodEnd": "2031-01-01T00:00:00Z"})
		file := admUpload(t, ts, ts.open(), openTok, "logo.png", "image/png", admPNG).want(t, http.StatusCreated, "upload at Open School").obj(t)
		form := &storage.Form{Slug: "contact", Title: "Contact", Fields: []storage.FormField{{Name: "message", Label: "Message", Type: "text"}}}
		if err := ts.app.Store.FormRecords().Create(t.Context(), open.ID, form); err != nil {
			t.Fatal(err)
		}
		openUser, _ := ts.app.Store.UserByEmail(t.Context(), demo.StudentEmail)
		comment := &storage.Comment{UserID: openUser.ID, Body: "Nice", CourseID: admPtr(admID(t, course, "id"))}
		if err := ts.app.Store.CommentRecords().Create(t.Context(), open.ID, comment); err != nil {
			t.Fatal(err)
		}
		var orders struct{ Items []map[string]any }
		admDo(t, ts, http.MethodGet, ts.open(), "/orders", openTok, nil).want(t, 200, "orders").json(t, &orders)

		type target struct {
			path  string
			patch any    // nil: no PATCH operation
			del   bool   // a DELETE operation
			read  string // where Open School reads it back ("": path)
		}
		curriculum := "/courses/" + s(course) + "/curriculum"
		student := "/students/" + openUser.ID
		targets := []target{
			{"/courses/" + s(course), map[string]any{"title": "Hijacked"}, true, ""},
			{curriculum, nil, false, ""},
			{"/sections/" + s(section), map[string]any{"title": "Hijacked"}, true, curriculum},
			{"/lectures/" + s(lecture), map[string]any{"title": "Hijacked"}, true, curriculum},
			{"/membership-plans/" + s(plan), map[string]any{"title": "Hijacked"}, true, ""},
			{"/enrollments/" + s(enrollment), map[string]any{"lifetimeAccess": true}, true, student},
			{"/subscriptions/" + s(subscription), nil, false, ""},
			{"/files/" + s(file), nil, true, ""},
			{"/comments/" + strconv.FormatInt(comment.ID, 10), nil, false, ""},
			{"/forms/" + strconv.FormatInt(form.ID, 10) + "/submissions", nil, false, ""},
		}
		for _, kind := range []struct{ coll, body string }{{"events", `{"slug":"open-event","title":"E","startsAt":"2030-01-01T10:00:00Z","endsAt":"2030-01-01T11:00:00Z"}`},
			{"coupons", `{"code":"OPEN10","percentOff":10}`}, {"posts", `{"slug":"open-post","title":"P"}`}, {"pages", `{"slug":"open-page","title":"P"}`},
			{"digital-products", `{"slug":"open-product","title":"P"}`}, {"lecturers", `{"slug":"open-lecturer","name":"L"}`}} {
			m := mk("/"+kind.coll, []byte(kind.body))
			targets = append(targets, target{"/" + kind.coll + "/" + s(m), map[string]any{"description": "Hijacked"}, true, ""})
		}
		if len(orders.Items) > 0 {
			targets = append(targets, target{"/orders/" + s(orders.Items[0]), nil, false, ""})
		}
		for _, tg := range targets {
			read := tg.path
			if tg.read != "" {
				read = tg.read
			}
			before := admDo(t, ts, http.MethodGet, ts.open(), read, openTok, nil).want(t, 200, "Open School reads "+read)
			if tg.read == "" {
				admProblem(t, admDo(t, ts, http.MethodGet, ts.academy(), tg.path, tok, nil), 404, "", "GET "+tg.path+" at Academy")
			}
			if tg.patch != nil {
				admProblem(t, admDo(t, ts, http.MethodPatch, ts.academy(), tg.path, tok, tg.patch), 404, "", "PATCH "+tg.path+" at Academy")
			}
			if tg.del {
				admProblem(t, admDo(t, ts, http.MethodDelete, ts.academy(), tg.path, tok, nil), 404, "", "DELETE "+tg.path+" at Academy")
			}
			after := admDo(t, ts, http.MethodGet, ts.open(), read, openTok, nil).want(t, 200, "Open School reads "+read+" again")
			if string(before.body) != string(after.body) {
				t.Errorf("%s changed through Academy:\n%s\n%s", tg.path, before.body, after.body)
			}
		}
		// Other actions on Open School's ids.
		admProblem(t, admDo(t, ts, http.MethodPost, ts.academy(), "/courses/"+s(course)+"/publish", tok, nil), 404, "", "publish Open School's course")
		admProblem(t, admDo(t, ts, http.MethodPost, ts.academy(), "/courses/"+s(course)+"/sections", tok, map[string]any{"title": "x"}), 404, "", "add a section to Open School's course")
		admProblem(t, admDo(t, ts, http.MethodPost, ts.academy(), "/sections/"+s(section)+"/lectures", tok, map[string]any{"title": "x"}), 404, "", "add a lecture to Open School's section")
		admProblem(t, admDo(t, ts, http.MethodPost, ts.academy(), "/subscriptions/"+s(subscription)+"/cancel", tok, nil), 404, "", "cancel Open School's subscription")
		admProblem(t, admDo(t, ts, http.MethodPut, ts.academy(), "/courses/"+s(course)+"/curriculum", tok, map[string]any{"sections": []any{}}), 404, "", "reorder Open School's course")
		// Ids of Open School in bodies.
		admProblem(t, admDo(t, ts, http.MethodPost, ts.academy(), "/enrollments", tok, map[string]any{"email": demo.StudentEmail, "courseId": admID(t, course, "id")}), 422, "courseId", "enroll in Open School's course")
		admProblem(t, admDo(t, ts, http.MethodPost, ts.academy(), "/subscriptions", tok, map[string]any{"email": demo.StudentEmail, "planId": admID(t, plan, "id"), "currentPeriodEnd": "2031-01-01T00:00:00Z"}), 422, "planId", "subscribe to Open School's plan")
		admProblem(t, admDo(t, ts, http.MethodPut, ts.academy(), "/appearance", tok, map[string]any{"primaryColor": "#000000", "accentColor": "#000000", "backgroundColor": "#ffffff", "textColor": "#000000", "logoFileId": admID(t, file, "id")}), 422, "logoFileId", "Open School's file as Academy's logo")
		// Lists at Academy never show Open School's rows.
		for _, coll := range []string{"/courses", "/events", "/coupons", "/posts", "/pages", "/digital-products", "/lecturers", "/membership-plans", "/subscriptions", "/comments", "/forms"} {
			r := admDo(t, ts, http.MethodGet, ts.academy(), coll+"?limit=100", tok, nil).want(t, 200, "list "+coll)
			for _, slug := range []string{"open-only", "open-event", "OPEN10", "open-post", "open-page", "open-product", "open-lecturer", "open-plan", "Nice", "contact"} {
				if strings.Contains(string(r.body), `"`+slug+`"`) {
					t.Errorf("Academy's %s lists Open School's %s", coll, slug)
				}
			}
		}
		// Open School's uploaded file is not served at Academy's origin.
		key := strings.TrimPrefix(file["url"].(string), ts.open()+"/uploads/")
		admDo(t, ts, http.MethodGet, ts.academy(), "/uploads/"+key, "", nil).want(t, 404, "Open School's upload at Academy")
		admDo(t, ts, http.MethodGet, ts.open(), "/uploads/"+key, "", nil).want(t, 200, "Open School's upload at Open School")
	})
}

func admPtr[T any](v T) *T { return &v }
