package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lectern/lectern/internal/demo"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
	"github.com/lectern/lectern/vocab"
)

// End-to-end tests of the Member API (/member/graphql) on the real server,
// with tokens from the real authorization flow for the demo student.

const gqlEverything = `query Everything {
	viewer {
		id name email
		schools { id slug name origin roles isCurrent }
		enrolledCourses { totalCount pageInfo { hasNextPage endCursor }
			nodes { id slug title enrolledAt expireDate hasLifetimeAccess lastWatchedLecture { lectureId positionSeconds completed watchedAt } } }
		digitalProducts { totalCount pageInfo { hasNextPage endCursor } nodes { id slug title purchasedAt } }
		consultingServices { totalCount pageInfo { hasNextPage endCursor } nodes { id slug title purchasedAt sessionsIncluded sessionsUsed } }
		eventRegistrations { totalCount pageInfo { hasNextPage endCursor } nodes { id eventSlug title startsAt endsAt registeredAt } }
	}
	notifications { totalCount pageInfo { hasNextPage } nodes { id kind title body url createdAt readAt } }
	unreadNotificationCount
	notificationSubscriptions { totalCount pageInfo { hasNextPage endCursor } nodes { topic channel enabled } }
}`

// Every field and connection answers the demo student's seeded data
// (internal/demo/catalog.go), and nothing of the orders behind it.
func TestGQLMemberSeededData(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, nil)
		now := time.Now()
		day := 24 * time.Hour
		academy, open := gqlSite(t, ts, demo.AcademySlug), gqlSite(t, ts, demo.OpenSlug)
		student := gqlUser(t, ts, demo.StudentEmail)
		tok := ts.studentToken(t, ts.academy()).AccessToken
		r := gqlPost(t, ts, ts.academy(), tok, gqlEverything, nil)
		if r.status != 200 || len(r.Errors) != 0 {
			t.Fatalf("%d %s", r.status, r.raw)
		}
		d := r.Data
		v := d["viewer"]

		if gqlPath(v, "id") != student.ID || gqlPath(v, "name") != "Sam Student" || gqlPath(v, "email") != demo.StudentEmail {
			t.Errorf("viewer %v %v %v", gqlPath(v, "id"), gqlPath(v, "name"), gqlPath(v, "email"))
		}
		wantSchools := []any{
			map[string]any{"id": fmt.Sprint(academy.ID), "slug": demo.AcademySlug, "name": demo.AcademyName, "origin": ts.academy(), "roles": []any{"student"}, "isCurrent": true},
			map[string]any{"id": fmt.Sprint(open.ID), "slug": demo.OpenSlug, "name": demo.OpenName, "origin": ts.open(), "roles": []any{"student"}, "isCurrent": false},
		}
		if diff := cmp.Diff(wantSchools, gqlPath(v, "schools")); diff != "" {
			t.Errorf("schools (-want +got):\n%s", diff)
		}

		// Two enrollments: go-fundamentals for life, web-security-essentials
		// for a year, each with its last watched lecture.
		ec := gqlPath(v, "enrolledCourses")
		if gqlPath(ec, "totalCount") != 2.0 || gqlPath(ec, "pageInfo", "hasNextPage") != false {
			t.Errorf("enrolledCourses: %v", ec)
		}
		goCourse, sec := gqlPath(ec, "nodes", 0), gqlPath(ec, "nodes", 1)
		if gqlPath(goCourse, "slug") != "go-fundamentals" || gqlPath(goCourse, "title") != "Go Fundamentals" ||
			gqlPath(goCourse, "hasLifetimeAccess") != true || gqlPath(goCourse, "expireDate") != nil {
			t.Errorf("go-fundamentals: %v", goCourse)
		}
		gqlNear(t, "go-fundamentals enrolledAt", gqlTime(t, gqlPath(goCourse, "enrolledAt")), now.Add(-60*day))
		wantLast := map[string]any{"lectureId": gqlLectureID(t, ts, academy, "go-fundamentals", "Goroutines and channels"), "positionSeconds": 754.0, "completed": false}
		gotLast, _ := gqlPath(goCourse, "lastWatchedLecture").(map[string]any)
		gqlNear(t, "go-fundamentals watchedAt", gqlTime(t, gotLast["watchedAt"]), now.Add(-2*day))
		delete(gotLast, "watchedAt")
		if diff := cmp.Diff(wantLast, gotLast); diff != "" {
			t.Errorf("go-fundamentals lastWatchedLecture (-want +got):\n%s", diff)
		}
		if gqlPath(sec, "slug") != "web-security-essentials" || gqlPath(sec, "hasLifetimeAccess") != false {
			t.Errorf("web-security-essentials: %v", sec)
		}
		gqlNear(t, "web-security-essentials expireDate", gqlTime(t, gqlPath(sec, "expireDate")), now.Add(365*day))
		if gqlPath(sec, "lastWatchedLecture", "lectureId") != gqlLectureID(t, ts, academy, "web-security-essentials", "Same-origin policy") ||
			gqlPath(sec, "lastWatchedLecture", "positionSeconds") != 312.0 {
			t.Errorf("web-security-essentials lastWatchedLecture: %v", gqlPath(sec, "lastWatchedLecture"))
		}

		dp := gqlPath(v, "digitalProducts")
		if gqlPath(dp, "totalCount") != 1.0 || gqlPath(dp, "nodes", 0, "slug") != "go-cheat-sheet" || gqlPath(dp, "nodes", 0, "title") != "Go Cheat Sheet" {
			t.Errorf("digitalProducts: %v", dp)
		}
		gqlNear(t, "go-cheat-sheet purchasedAt", gqlTime(t, gqlPath(dp, "nodes", 0, "purchasedAt")), now.Add(-20*day))
		cs := gqlPath(v, "consultingServices")
		if gqlPath(cs, "totalCount") != 1.0 || gqlPath(cs, "nodes", 0, "slug") != "code-review-session" || gqlPath(cs, "nodes", 0, "title") != "Code Review Sessions" ||
			gqlPath(cs, "nodes", 0, "sessionsIncluded") != 3.0 || gqlPath(cs, "nodes", 0, "sessionsUsed") != 1.0 {
			t.Errorf("consultingServices: %v", cs)
		}
		er := gqlPath(v, "eventRegistrations")
		if gqlPath(er, "totalCount") != 1.0 || gqlPath(er, "nodes", 0, "eventSlug") != "live-qa-go" || gqlPath(er, "nodes", 0, "title") != "Live Q&A: Go in Production" {
			t.Errorf("eventRegistrations: %v", er)
		}
		starts := gqlTime(t, gqlPath(er, "nodes", 0, "startsAt"))
		gqlNear(t, "live-qa-go startsAt", starts, now.Add(14*day))
		if ends := gqlTime(t, gqlPath(er, "nodes", 0, "endsAt")); ends.Sub(starts) != time.Hour {
			t.Errorf("live-qa-go lasts %s", ends.Sub(starts))
		}
		gqlNear(t, "live-qa-go registeredAt", gqlTime(t, gqlPath(er, "nodes", 0, "registeredAt")), now.Add(-3*day))

		// Three notifications, newest first, the oldest read.
		ns := d["notifications"]
		if gqlPath(ns, "totalCount") != 3.0 || d["unreadNotificationCount"] != 2.0 {
			t.Errorf("notifications %v, unread %v", gqlPath(ns, "totalCount"), d["unreadNotificationCount"])
		}
		wantNotes := []struct{ kind, title, url string }{
			{"announcement", "Welcome to Demo Academy", ts.academy() + "/"},
			{"event_reminder", "Live Q&A in two weeks", ts.academy() + "/events/live-qa-go"},
			{"course_update", "New lecture in Go Fundamentals", ts.academy() + "/courses/go-fundamentals"},
		}
		for i, w := range wantNotes {
			n := gqlPath(ns, "nodes", i)
			if gqlPath(n, "kind") != w.kind || gqlPath(n, "title") != w.title || gqlPath(n, "url") != w.url || gqlPath(n, "body") == "" {
				t.Errorf("notification %d: %v; want %+v", i, n, w)
			}
			if read := gqlPath(n, "readAt") != nil; read != (i == 2) {
				t.Errorf("notification %d readAt %v", i, gqlPath(n, "readAt"))
			}
		}
		gqlNear(t, "the read notification's readAt", gqlTime(t, gqlPath(ns, "nodes", 2, "readAt")), now.Add(-12*time.Hour))
		wantSubs := []any{
			map[string]any{"topic": "announcements", "channel": "email", "enabled": false},
			map[string]any{"topic": "course_updates", "channel": "email", "enabled": true},
			map[string]any{"topic": "event_reminders", "channel": "push", "enabled": true},
		}
		if diff := cmp.Diff(wantSubs, gqlPath(d, "notificationSubscriptions", "nodes")); diff != "" {
			t.Errorf("notificationSubscriptions (-want +got):\n%s", diff)
		}
		if gqlPath(d, "notificationSubscriptions", "totalCount") != 3.0 || gqlPath(d, "notificationSubscriptions", "pageInfo", "hasNextPage") != false {
			t.Errorf("notificationSubscriptions: %v", d["notificationSubscriptions"])
		}
		// The orders behind the purchases (DA-1001..DA-1004, coupon SPRING10,
		// a partial refund) never show.
		for _, secret := range []string{"DA-100", "SPRING10", "partial", "7110", "15000"} {
			if strings.Contains(r.raw, secret) {
				t.Errorf("the member API shows %q: %s", secret, r.raw)
			}
		}

		// At Open School the same person sees that site's rows only.
		openTok := ts.studentToken(t, ts.open()).AccessToken
		od := gqlQuery(t, ts, ts.open(), openTok, gqlEverything, nil)
		ov := od["viewer"]
		if gqlPath(ov, "enrolledCourses", "totalCount") != 1.0 || gqlPath(ov, "enrolledCourses", "nodes", 0, "slug") != "python-basics" ||
			gqlPath(ov, "enrolledCourses", "nodes", 0, "lastWatchedLecture") != nil ||
			gqlPath(ov, "digitalProducts", "totalCount") != 0.0 || gqlPath(ov, "consultingServices", "totalCount") != 0.0 ||
			gqlPath(ov, "eventRegistrations", "totalCount") != 0.0 || gqlPath(od, "notifications", "totalCount") != 0.0 ||
			od["unreadNotificationCount"] != 0.0 || gqlPath(od, "notificationSubscriptions", "totalCount") != 0.0 ||
			!cmp.Equal(gqlPath(od, "notificationSubscriptions", "nodes"), []any{}) {
			t.Errorf("Open School: %v", od)
		}
		if gqlPath(ov, "schools", 0, "isCurrent") != false || gqlPath(ov, "schools", 1, "isCurrent") != true {
			t.Errorf("Open School schools: %v", gqlPath(ov, "schools"))
		}
	})
}

// Pagination walks every page with first: 1: endCursor, hasNextPage and
// totalCount agree, and a page after the last is empty.
func TestGQLMemberPagination(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, nil)
		tok := ts.studentToken(t, ts.academy()).AccessToken
		walk := func(query string, at ...any) []string {
			t.Helper()
			var got []string
			var after any
			for page := 0; ; page++ {
				d := gqlQuery(t, ts, ts.academy(), tok, query, map[string]any{"after": after})
				c := gqlPath(d, at...)
				nodes, _ := gqlPath(c, "nodes").([]any)
				total, _ := gqlPath(c, "totalCount").(float64)
				hasNext := gqlPath(c, "pageInfo", "hasNextPage")
				end := gqlPath(c, "pageInfo", "endCursor")
				if page == int(total) {
					if len(nodes) != 0 || hasNext != false || end != nil {
						t.Fatalf("the page after the last: %v", c)
					}
					return got
				}
				if len(nodes) != 1 || end == nil || hasNext != (page+1 < int(total)) {
					t.Fatalf("page %d of %v: %v", page, total, c)
				}
				if end == after {
					t.Fatalf("endCursor did not move: %v", end)
				}
				got = append(got, fmt.Sprint(gqlPath(nodes[0], "key")))
				after = end
				if page > 10 {
					t.Fatal("pagination does not end")
				}
			}
		}
		courses := walk(`query($after: String) { viewer { enrolledCourses(first: 1, after: $after) { totalCount pageInfo { hasNextPage endCursor } nodes { key: slug } } } }`, "viewer", "enrolledCourses")
		if !cmp.Equal(courses, []string{"go-fundamentals", "web-security-essentials"}) {
			t.Errorf("enrolledCourses pages: %v", courses)
		}
		subs := walk(`query($after: String) { notificationSubscriptions(first: 1, after: $after) { totalCount pageInfo { hasNextPage endCursor } nodes { key: topic } } }`, "notificationSubscriptions")
		if !cmp.Equal(subs, []string{"announcements", "course_updates", "event_reminders"}) {
			t.Errorf("notificationSubscriptions pages: %v", subs)
		}
		notes := walk(`query($after: String) { notifications(first: 1, after: $after) { totalCount pageInfo { hasNextPage endCursor } nodes { key: title } } }`, "notifications")
		if !cmp.Equal(notes, []string{"Welcome to Demo Academy", "Live Q&A in two weeks", "New lecture in Go Fundamentals"}) {
			t.Errorf("notifications pages: %v", notes)
		}
		unread := walk(`query($after: String) { notifications(first: 1, after: $after, unreadOnly: true) { totalCount pageInfo { hasNextPage endCursor } nodes { key: title } } }`, "notifications")
		if !cmp.Equal(unread, []string{"Welcome to Demo Academy", "Live Q&A in two weeks"}) {
			t.Errorf("unread notifications pages: %v", unread)
		}
		for _, conn := range []string{"digitalProducts", "consultingServices", "eventRegistrations"} {
			got := walk(`query($after: String) { viewer { `+conn+`(first: 1, after: $after) { totalCount pageInfo { hasNextPage endCursor } nodes { key: id } } } }`, "viewer", conn)
			if len(got) != 1 {
				t.Errorf("%s pages: %v", conn, got)
			}
		}

		// One connection's cursor is refused by another, and a made-up one
		// by any: a field error, not a 500.
		d := gqlQuery(t, ts, ts.academy(), tok, `{ viewer { enrolledCourses(first: 1) { pageInfo { endCursor } } } }`, nil)
		cursor := gqlPath(d, "viewer", "enrolledCourses", "pageInfo", "endCursor")
		for _, q := range []string{
			`query($c: String) { notifications(after: $c) { totalCount } }`,
			`query($c: String) { viewer { digitalProducts(after: $c) { totalCount } } }`,
			`query($c: String) { notificationSubscriptions(after: $c) { totalCount } }`,
		} {
			r := gqlPost(t, ts, ts.academy(), tok, q, map[string]any{"c": cursor})
			if r.status != 200 || !cmp.Equal(r.codes(), []string{"BAD_USER_INPUT"}) {
				t.Errorf("%s with an enrolledCourses cursor: %d %s", q, r.status, r.raw)
			}
		}
		r := gqlPost(t, ts, ts.academy(), tok, `{ viewer { enrolledCourses(after: "bm90LWEtY3Vyc29y") { totalCount } } }`, nil)
		if r.status != 200 || !cmp.Equal(r.codes(), []string{"BAD_USER_INPUT"}) {
			t.Errorf("a made-up cursor: %d %s", r.status, r.raw)
		}
	})
}

// The mutations change what the next query sees.
// notificationSubscriptions is a connection (DESIGN §10), read with
// account:read alone: the demo student's three settings come two to a
// page, and the second page follows the first's endCursor.
func TestGQLMemberNotificationSubscriptionsConnection(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, nil)
		tok := ts.studentToken(t, ts.academy(), "account:read").AccessToken
		const q = `query($after: String) { notificationSubscriptions(first: 2, after: $after) { nodes { topic channel enabled } pageInfo { hasNextPage endCursor } totalCount } }`
		d := gqlQuery(t, ts, ts.academy(), tok, q, nil)
		first := map[string]any{
			"nodes": []any{
				map[string]any{"topic": "announcements", "channel": "email", "enabled": false},
				map[string]any{"topic": "course_updates", "channel": "email", "enabled": true},
			},
			"pageInfo":   map[string]any{"hasNextPage": true, "endCursor": gqlPath(d, "notificationSubscriptions", "pageInfo", "endCursor")},
			"totalCount": 3.0,
		}
		if diff := cmp.Diff(first, d["notificationSubscriptions"]); diff != "" {
			t.Fatalf("first page (-want +got):\n%s", diff)
		}
		end, _ := gqlPath(d, "notificationSubscriptions", "pageInfo", "endCursor").(string)
		if end == "" {
			t.Fatal("no endCursor on a page with nodes")
		}
		d = gqlQuery(t, ts, ts.academy(), tok, q, map[string]any{"after": end})
		if diff := cmp.Diff([]any{map[string]any{"topic": "event_reminders", "channel": "push", "enabled": true}},
			gqlPath(d, "notificationSubscriptions", "nodes")); diff != "" || gqlPath(d, "notificationSubscriptions", "pageInfo", "hasNextPage") != false {
			t.Fatalf("second page: %v (-want +got):\n%s", d, diff)
		}
		r := gqlPost(t, ts, ts.academy(), tok, `{ notificationSubscriptions(first: 101) { totalCount } }`, nil)
		if r.status != 200 || !cmp.Equal(r.codes(), []string{"BAD_USER_INPUT"}) {
			t.Errorf("first: 101: %d %s; want a BAD_USER_INPUT field error", r.status, r.raw)
		}
	})
}

func TestGQLMemberMutations(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, nil)
		tok := ts.studentToken(t, ts.academy()).AccessToken
		origin := ts.academy()
		unreadCount := func() any {
			return gqlQuery(t, ts, origin, tok, `{ unreadNotificationCount }`, nil)["unreadNotificationCount"]
		}
		d := gqlQuery(t, ts, origin, tok, `{ notifications(unreadOnly: true) { nodes { id title } } }`, nil)
		id := gqlPath(d, "notifications", "nodes", 1, "id")
		if gqlPath(d, "notifications", "nodes", 1, "title") != "Live Q&A in two weeks" {
			t.Fatalf("unread notifications: %v", d)
		}

		mark := `mutation($id: ID!) { markNotificationRead(id: $id) { id title readAt } }`
		d = gqlQuery(t, ts, origin, tok, mark, map[string]any{"id": id})
		readAt := gqlPath(d, "markNotificationRead", "readAt")
		gqlNear(t, "readAt", gqlTime(t, readAt), time.Now())
		if gqlPath(d, "markNotificationRead", "id") != id || unreadCount() != 1.0 {
			t.Fatalf("after markNotificationRead: %v, unread %v", d, unreadCount())
		}
		d = gqlQuery(t, ts, origin, tok, `{ notifications(first: 3) { nodes { id readAt } } }`, nil)
		if gqlPath(d, "notifications", "nodes", 1, "id") != id || gqlPath(d, "notifications", "nodes", 1, "readAt") != readAt {
			t.Errorf("the next query: %v; want %v read at %v", d, id, readAt)
		}
		// Marking it again keeps the first read time.
		time.Sleep(1100 * time.Millisecond)
		d = gqlQuery(t, ts, origin, tok, mark, map[string]any{"id": id})
		if gqlPath(d, "markNotificationRead", "readAt") != readAt {
			t.Errorf("marking again changed readAt: %v → %v", readAt, gqlPath(d, "markNotificationRead", "readAt"))
		}

		if d := gqlQuery(t, ts, origin, tok, `mutation { markAllNotificationsRead }`, nil); d["markAllNotificationsRead"] != 1.0 {
			t.Errorf("markAllNotificationsRead: %v; want 1", d)
		}
		if unreadCount() != 0.0 {
			t.Errorf("unread after markAllNotificationsRead: %v", unreadCount())
		}
		if d := gqlQuery(t, ts, origin, tok, `mutation { markAllNotificationsRead }`, nil); d["markAllNotificationsRead"] != 0.0 {
			t.Errorf("markAllNotificationsRead again: %v; want 0", d)
		}

		update := `mutation($t: String!, $c: String!, $e: Boolean!) { updateNotificationSubscription(topic: $t, channel: $c, enabled: $e) { topic channel enabled } }`
		d = gqlQuery(t, ts, origin, tok, update, map[string]any{"t": "announcements", "c": "email", "e": true})
		if !cmp.Equal(d["updateNotificationSubscription"], map[string]any{"topic": "announcements", "channel": "email", "enabled": true}) {
			t.Errorf("updateNotificationSubscription: %v", d)
		}
		gqlQuery(t, ts, origin, tok, update, map[string]any{"t": "course_updates", "c": "push", "e": false})
		d = gqlQuery(t, ts, origin, tok, `{ notificationSubscriptions { nodes { topic channel enabled } } }`, nil)
		wantSubs := []any{
			map[string]any{"topic": "announcements", "channel": "email", "enabled": true},
			map[string]any{"topic": "course_updates", "channel": "email", "enabled": true},
			map[string]any{"topic": "course_updates", "channel": "push", "enabled": false},
			map[string]any{"topic": "event_reminders", "channel": "push", "enabled": true},
		}
		if diff := cmp.Diff(wantSubs, gqlPath(d, "notificationSubscriptions", "nodes")); diff != "" {
			t.Errorf("subscriptions after the updates (-want +got):\n%s", diff)
		}
		r := gqlPost(t, ts, origin, tok, update, map[string]any{"t": "made_up_topic", "c": "email", "e": true})
		if r.status != 200 || !cmp.Equal(r.codes(), []string{"BAD_USER_INPUT"}) {
			t.Errorf("an unknown topic: %d %s", r.status, r.raw)
		}
	})
}

// Tokens: an account:read token cannot mutate (403 naming account:write),
// an account:write token cannot read, operator tokens get 403, and missing,
// malformed, foreign-origin and revoked tokens get 401 pointing at the
// protected-resource metadata.
func TestGQLMemberTokens(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, nil)
		origin := ts.academy()
		metadata := `resource_metadata="` + origin + `/.well-known/oauth-protected-resource"`
		const mutation = `mutation { markAllNotificationsRead }`
		const query = `{ viewer { id } unreadNotificationCount }`

		readTok := ts.studentToken(t, origin, "openid", "account:read").AccessToken
		if d := gqlQuery(t, ts, origin, readTok, query, nil); d["unreadNotificationCount"] != 2.0 {
			t.Fatalf("account:read query: %v", d)
		}
		r := gqlPost(t, ts, origin, readTok, mutation, nil)
		www := r.header.Get("WWW-Authenticate")
		if r.status != 403 || !strings.Contains(www, `error="insufficient_scope"`) || !strings.Contains(www, `scope="account:write"`) || !strings.Contains(www, metadata) {
			t.Fatalf("mutation with account:read: %d %q %s", r.status, www, r.raw)
		}
		var body oauthError
		if err := json.Unmarshal([]byte(r.raw), &body); err != nil || body.Error != "insufficient_scope" {
			t.Errorf("403 body %s", r.raw)
		}
		if d := gqlQuery(t, ts, origin, readTok, query, nil); d["unreadNotificationCount"] != 2.0 {
			t.Fatalf("the refused mutation ran: unread %v", d["unreadNotificationCount"])
		}

		writeTok := ts.studentToken(t, origin, "account:write").AccessToken
		r = gqlPost(t, ts, origin, writeTok, query, nil)
		if r.status != 403 || !strings.Contains(r.header.Get("WWW-Authenticate"), `scope="account:read"`) {
			t.Errorf("query with account:write only: %d %q", r.status, r.header.Get("WWW-Authenticate"))
		}
		// Nor can it read a notification by marking it: what a mutation
		// returns beyond ids needs account:read.
		const markAndRead = `mutation { markNotificationRead(id: "1") { id title body url } }`
		r = gqlPost(t, ts, origin, writeTok, markAndRead, nil)
		if r.status != 403 || !strings.Contains(r.header.Get("WWW-Authenticate"), `scope="account:read account:write"`) || strings.Contains(r.raw, "title") {
			t.Errorf("account:write marking and reading: %d %q %s", r.status, r.header.Get("WWW-Authenticate"), r.raw)
		}

		opTok := ts.ownerToken(t, origin, "courses:read", "students:read").AccessToken
		for _, q := range []string{query, mutation} {
			r := gqlPost(t, ts, origin, opTok, q, nil)
			if r.status != 403 || !strings.Contains(r.header.Get("WWW-Authenticate"), `error="insufficient_scope"`) {
				t.Errorf("operator token, %s: %d %q", q, r.status, r.header.Get("WWW-Authenticate"))
			}
		}

		otherSite := ts.studentToken(t, ts.open()).AccessToken
		for name, tok := range map[string]string{"no token": "", "malformed": "not-a-jwt", "Open School's token": otherSite} {
			r := gqlPost(t, ts, origin, tok, query, nil)
			www := r.header.Get("WWW-Authenticate")
			if r.status != 401 || !strings.Contains(www, `error="invalid_token"`) || !strings.Contains(www, metadata) {
				t.Errorf("%s: %d %q %s", name, r.status, www, r.raw)
			}
		}

		// Revocation (RFC 7009) takes effect at once.
		tok := ts.studentToken(t, origin).AccessToken
		gqlQuery(t, ts, origin, tok, query, nil)
		if status, _, _ := ts.postForm(t, origin+vocab.RevocationPath, url.Values{"token": {tok}, "client_id": {demo.MemberClientID}}); status != 200 {
			t.Fatalf("revoke: %d", status)
		}
		r = gqlPost(t, ts, origin, tok, query, nil)
		if r.status != 401 || !strings.Contains(r.header.Get("WWW-Authenticate"), metadata) {
			t.Errorf("revoked token: %d %q", r.status, r.header.Get("WWW-Authenticate"))
		}

		// A member removed from the site loses the API at once, whatever
		// their token says; given the role back, the same token works.
		tok = ts.studentToken(t, origin).AccessToken
		academy := gqlSite(t, ts, "demo-academy")
		if _, err := ts.app.Platform.RevokeRole(context.Background(), academy.ID, demo.StudentEmail, storage.RoleStudent); err != nil {
			t.Fatal(err)
		}
		r = gqlPost(t, ts, origin, tok, query, nil)
		if r.status != 403 || !strings.Contains(r.raw, "no longer holds a role") || !strings.Contains(r.header.Get("WWW-Authenticate"), metadata) {
			t.Errorf("token of a member removed from the site: %d %q %s", r.status, r.header.Get("WWW-Authenticate"), r.raw)
		}
		if _, err := ts.app.Platform.GrantRole(context.Background(), academy.ID, demo.StudentEmail, storage.RoleStudent); err != nil {
			t.Fatal(err)
		}
		gqlQuery(t, ts, origin, tok, query, nil)
	})
}

// Another member's notification, and the member's own at another site,
// can be neither read nor marked.
func TestGQLMemberOtherMembersNotifications(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, nil)
		ctx := context.Background()
		academy, open := gqlSite(t, ts, demo.AcademySlug), gqlSite(t, ts, demo.OpenSlug)
		student, owner := gqlUser(t, ts, demo.StudentEmail), gqlUser(t, ts, demo.OwnerEmail)
		ownerNote := &storage.Notification{SiteID: academy.ID, UserID: owner.ID, Kind: "announcement", Title: "Owner-only payout report", Body: "secret", URL: ts.academy(), CreatedAt: time.Now()}
		elsewhere := &storage.Notification{SiteID: open.ID, UserID: student.ID, Kind: "announcement", Title: "Open School news", Body: "b", URL: ts.open(), CreatedAt: time.Now()}
		if err := ts.app.Store.Load(ctx, ownerNote, elsewhere); err != nil {
			t.Fatal(err)
		}
		tok := ts.studentToken(t, ts.academy()).AccessToken

		d := gqlQuery(t, ts, ts.academy(), tok, `{ notifications(first: 100) { totalCount nodes { id title } } unreadNotificationCount }`, nil)
		if gqlPath(d, "notifications", "totalCount") != 3.0 || d["unreadNotificationCount"] != 2.0 {
			t.Errorf("the student's notifications: %v", d)
		}
		for _, n := range gqlPath(d, "notifications", "nodes").([]any) {
			if id := gqlPath(n, "id"); id == fmt.Sprint(ownerNote.ID) || id == fmt.Sprint(elsewhere.ID) {
				t.Errorf("the list shows %v", n)
			}
		}
		for _, id := range []int64{ownerNote.ID, elsewhere.ID} {
			r := gqlPost(t, ts, ts.academy(), tok, `mutation($id: ID!) { markNotificationRead(id: $id) { id title body } }`, map[string]any{"id": fmt.Sprint(id)})
			if r.status != 200 || !cmp.Equal(r.codes(), []string{"NOT_FOUND"}) || gqlPath(r.Data, "markNotificationRead") != nil {
				t.Errorf("marking notification %d: %d %s", id, r.status, r.raw)
			}
			if strings.Contains(r.raw, "payout") || strings.Contains(r.raw, "Open School news") {
				t.Errorf("marking notification %d shows it: %s", id, r.raw)
			}
		}
		if d := gqlQuery(t, ts, ts.academy(), tok, `mutation { markAllNotificationsRead }`, nil); d["markAllNotificationsRead"] != 2.0 {
			t.Errorf("markAllNotificationsRead: %v; want the student's 2", d)
		}
		for _, c := range []struct {
			site tenant.ID
			user string
			id   int64
		}{{academy.ID, owner.ID, ownerNote.ID}, {open.ID, student.ID, elsewhere.ID}} {
			rows, _, err := ts.app.Store.ListNotifications(ctx, c.site, c.user, storage.Page{Limit: 100}, true)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(rows, func(n storage.Notification) bool { return n.ID == c.id }) {
				t.Errorf("notification %d was marked read by another member or at another site", c.id)
			}
		}
	})
}

// The schema, as introspection shows it, carries no order number, coupon,
// refund or invoice anywhere; the purchase and notification nodes have
// exactly the fields of DESIGN §10, and the mutations its shapes.
func TestGQLMemberSchemaIntrospection(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	tok := ts.studentToken(t, ts.academy(), "openid", "account:read").AccessToken
	d := gqlQuery(t, ts, ts.academy(), tok, `{ __schema {
		types { name kind
			fields { name args { name type { ...T } } type { ...T } }
			inputFields { name }
			enumValues { name } } } }
		fragment T on __Type { kind name ofType { kind name ofType { kind name ofType { kind name } } } }`, nil)
	types, _ := gqlPath(d, "__schema", "types").([]any)
	forbidden := regexp.MustCompile(`(?i)order|coupon|refund|invoice`)
	fieldsOf := map[string][]string{}
	typeOf := map[string]string{}
	checked := 0
	check := func(what, name string) {
		checked++
		if forbidden.MatchString(name) {
			t.Errorf("the member schema has %s %q", what, name)
		}
	}
	var render func(v any) string
	render = func(v any) string {
		switch gqlPath(v, "kind") {
		case "NON_NULL":
			return render(gqlPath(v, "ofType")) + "!"
		case "LIST":
			return "[" + render(gqlPath(v, "ofType")) + "]"
		}
		return fmt.Sprint(gqlPath(v, "name"))
	}
	for _, typ := range types {
		name := fmt.Sprint(gqlPath(typ, "name"))
		if strings.HasPrefix(name, "__") {
			continue
		}
		check("type", name)
		fields, _ := gqlPath(typ, "fields").([]any)
		for _, f := range fields {
			fname := fmt.Sprint(gqlPath(f, "name"))
			check("field "+name+".", fname)
			fieldsOf[name] = append(fieldsOf[name], fname)
			var args []string
			fargs, _ := gqlPath(f, "args").([]any)
			for _, a := range fargs {
				check("argument of "+name+"."+fname, fmt.Sprint(gqlPath(a, "name")))
				args = append(args, fmt.Sprint(gqlPath(a, "name"))+": "+render(gqlPath(a, "type")))
			}
			typeOf[name+"."+fname] = "(" + strings.Join(args, ", ") + "): " + render(gqlPath(f, "type"))
		}
		inputFields, _ := gqlPath(typ, "inputFields").([]any)
		for _, f := range inputFields {
			check("input field of "+name, fmt.Sprint(gqlPath(f, "name")))
		}
		if ev, ok := gqlPath(typ, "enumValues").([]any); ok {
			for _, e := range ev {
				check("enum value of "+name, fmt.Sprint(gqlPath(e, "name")))
			}
		}
	}
	if checked < 60 {
		t.Fatalf("introspection showed only %d names", checked)
	}
	for typ, want := range map[string][]string{
		"DigitalProduct":           {"id", "slug", "title", "purchasedAt"},
		"ConsultingService":        {"id", "slug", "title", "purchasedAt", "sessionsIncluded", "sessionsUsed"},
		"EventRegistration":        {"id", "eventSlug", "title", "startsAt", "endsAt", "registeredAt"},
		"Notification":             {"id", "kind", "title", "body", "url", "createdAt", "readAt"},
		"NotificationSubscription": {"topic", "channel", "enabled"},
		"PageInfo":                 {"hasNextPage", "endCursor"},
		"LastWatchedLecture":       {"lectureId", "positionSeconds", "completed", "watchedAt"},
	} {
		got := slices.Clone(fieldsOf[typ])
		slices.Sort(got)
		slices.Sort(want)
		if !cmp.Equal(got, want) {
			t.Errorf("%s fields %v; want %v", typ, got, want)
		}
	}
	for field, want := range map[string]string{
		"Mutation.markNotificationRead":           "(id: ID!): Notification!",
		"Mutation.markAllNotificationsRead":       "(): Int!",
		"Mutation.updateNotificationSubscription": "(topic: String!, channel: String!, enabled: Boolean!): NotificationSubscription!",
		"Viewer.enrolledCourses":                  "(first: Int, after: String): EnrolledCourseConnection!",
		"EnrolledCourseConnection.totalCount":     "(): Int!",
		"EnrolledCourse.expireDate":               "(): DateTime",
		"EnrolledCourse.hasLifetimeAccess":        "(): Boolean!",
		"Query.unreadNotificationCount":           "(): Int!",
	} {
		if typeOf[field] != want {
			t.Errorf("%s%s; want %s", field, typeOf[field], want)
		}
	}
}

// The protections, through the real router: every refusal is a
// GraphQL-shaped error with its HTTP status, and nothing reaches the data.
func TestGQLMemberProtection(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	origin := ts.academy()
	tok := ts.studentToken(t, origin).AccessToken
	aliases := func(n int, field string) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "a%d: %s ", i, field)
		}
		return b.String()
	}
	q := func(query string) []byte { return mustJSON(map[string]any{"query": query}) }
	tests := []struct {
		name, method, contentType string
		body                      []byte
		status                    int
		code                      string
	}{
		{"GET", http.MethodGet, "", nil, 405, "METHOD_NOT_ALLOWED"},
		{"GET with a query string", http.MethodGet, "", nil, 405, "METHOD_NOT_ALLOWED"},
		{"text/plain", http.MethodPost, "text/plain", q(`{ viewer { id } }`), 415, "UNSUPPORTED_MEDIA_TYPE"},
		{"malformed JSON", http.MethodPost, "application/json", []byte(`{"query": `), 400, "BAD_REQUEST"},
		{"missing query", http.MethodPost, "application/json", []byte(`{"operationName": "X"}`), 400, "BAD_REQUEST"},
		{"syntax error", http.MethodPost, "application/json", q(`{ viewer { id `), 400, "GRAPHQL_PARSE_FAILED"},
		{"validation error", http.MethodPost, "application/json", q(`{ viewer { orders } }`), 400, "GRAPHQL_VALIDATION_FAILED"},
		{"depth", http.MethodPost, "application/json", q(`{ __schema { types { ` + strings.Repeat("ofType { ", 20) + "name" + strings.Repeat(" }", 20) + ` } } }`), 400, "QUERY_TOO_COMPLEX"},
		{"oversized query", http.MethodPost, "application/json", q(`{ viewer { id } }` + strings.Repeat(" ", 17<<10)), 400, "QUERY_TOO_LARGE"},
		{"top-level fields", http.MethodPost, "application/json", q(`{ ` + aliases(11, "unreadNotificationCount") + ` }`), 400, "QUERY_TOO_COMPLEX"},
		{"cost", http.MethodPost, "application/json", q(`{ viewer { ` + aliases(7, "enrolledCourses(first: 100) { nodes { slug } }") + ` } }`), 400, "QUERY_TOO_COMPLEX"},
		{"oversized body", http.MethodPost, "application/json", []byte(`{"query": "{ viewer { id } }", "extensions": {"pad": "` + strings.Repeat("x", 100<<10) + `"}}`), 413, "PAYLOAD_TOO_LARGE"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var query []string
			if tc.name == "GET with a query string" {
				query = []string{"?query=%7Bviewer%7Bid%7D%7D"}
			}
			r := gqlDo(t, ts, tc.method, origin, tok, tc.contentType, tc.body, query...)
			if r.status != tc.status || !cmp.Equal(r.codes(), []string{tc.code}) || r.Data != nil {
				t.Fatalf("%d %v; want %d %s without data: %s", r.status, r.codes(), tc.status, tc.code, r.raw)
			}
			if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("Content-Type %q", ct)
			}
			if tc.status == 405 && r.header.Get("Allow") != http.MethodPost {
				t.Errorf("Allow %q", r.header.Get("Allow"))
			}
		})
	}
	// first: 101 is an error of the field, not a clamp.
	r := gqlPost(t, ts, origin, tok, `{ viewer { enrolledCourses(first: 101) { totalCount } } }`, nil)
	if r.status != 200 || !cmp.Equal(r.codes(), []string{"BAD_USER_INPUT"}) || !strings.Contains(r.Errors[0].Message, "between 1 and 100") {
		t.Errorf("first: 101: %d %s", r.status, r.raw)
	}
	// GET is refused before the token is looked at.
	if r := gqlDo(t, ts, http.MethodGet, origin, "", "", nil); r.status != 405 {
		t.Errorf("GET without a token: %d", r.status)
	}
}
