package memberapi

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	graphql "github.com/graph-gophers/graphql-go"

	"github.com/lectern/lectern/authserver/bearer"
	"github.com/lectern/lectern/storage"
)

const viewerQuery = `{ viewer { id name email schools { id slug name origin roles isCurrent } } }`

// The resolvers answer from the member's rows: a smoke test of every root
// field on the fake store (the real stores are covered end to end in
// integration/).
func TestMemberAPIResolvesEveryRootField(t *testing.T) {
	api := newTestAPI(t, seededFake(), nil)
	r := api.post(readWrite, `{
		viewer {
			id name email
			schools { id slug name origin roles isCurrent }
			enrolledCourses { totalCount nodes { id slug title expireDate hasLifetimeAccess lastWatchedLecture { lectureId positionSeconds completed watchedAt } } }
			digitalProducts { totalCount nodes { id slug title purchasedAt } }
			consultingServices { totalCount nodes { id } }
			eventRegistrations { totalCount nodes { id } }
		}
		notifications { totalCount nodes { id title readAt } }
		unreadNotificationCount
		notificationSubscriptions { totalCount nodes { topic channel enabled } }
	}`, nil)
	if r.status != 200 || len(r.Errors) != 0 {
		t.Fatalf("status %d: %s", r.status, r.raw)
	}
	want := map[string]any{
		"viewer": map[string]any{
			"id": testUser, "name": "Mem Ber", "email": "member@example.test",
			"schools": []any{
				map[string]any{"id": "7", "slug": "academy", "name": "Academy", "origin": testOrigin, "roles": []any{"student"}, "isCurrent": true},
				map[string]any{"id": "9", "slug": "other", "name": "Other", "origin": testOrigin2, "roles": []any{"admin", "student"}, "isCurrent": false},
			},
			"enrolledCourses": map[string]any{"totalCount": 2.0, "nodes": []any{
				map[string]any{"id": "1", "slug": "one", "title": "One", "expireDate": nil, "hasLifetimeAccess": true,
					"lastWatchedLecture": map[string]any{"lectureId": "101", "positionSeconds": 30.0, "completed": false, "watchedAt": "2026-05-01T12:00:00Z"}},
				map[string]any{"id": "2", "slug": "two", "title": "Two", "expireDate": "2026-05-02T12:00:00Z", "hasLifetimeAccess": false, "lastWatchedLecture": nil},
			}},
			"digitalProducts":    map[string]any{"totalCount": 1.0, "nodes": []any{map[string]any{"id": "5", "slug": "sheet", "title": "Sheet", "purchasedAt": "2026-05-01T12:00:00Z"}}},
			"consultingServices": map[string]any{"totalCount": 0.0, "nodes": []any{}},
			"eventRegistrations": map[string]any{"totalCount": 0.0, "nodes": []any{}},
		},
		// Only the member's own notifications at this site.
		"notifications": map[string]any{"totalCount": 2.0, "nodes": []any{
			map[string]any{"id": "22", "title": "second", "readAt": nil},
			map[string]any{"id": "21", "title": "first", "readAt": "2026-05-01T12:00:00Z"},
		}},
		"unreadNotificationCount": 1.0,
		"notificationSubscriptions": map[string]any{"totalCount": 2.0, "nodes": []any{
			map[string]any{"topic": "course_updates", "channel": "email", "enabled": true},
			map[string]any{"topic": "legacy_digest", "channel": "sms", "enabled": true},
		}},
	}
	if d := cmp.Diff(want, r.Data); d != "" {
		t.Fatalf("data (-want +got):\n%s", d)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	if cc := r.header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("Cache-Control %q; member data must not be cached", cc)
	}
}

// Requests that are not GraphQL-over-HTTP POSTs get GraphQL-shaped errors
// with the HTTP status of the problem.
func TestMemberAPIProtocolErrors(t *testing.T) {
	api := newTestAPI(t, seededFake(), nil)
	big := `{"query": "{ viewer { id } }", "variables": {"pad": "` + strings.Repeat("x", 70<<10) + `"}}`
	tests := []struct {
		name        string
		method      string
		contentType string
		body        string
		chunked     bool
		status      int
		code        string
		message     string
	}{
		{name: "GET", method: http.MethodGet, status: 405, code: CodeMethodNotAllowed, message: "POST only"},
		{name: "PUT", method: http.MethodPut, contentType: "application/json", body: `{"query":"{viewer{id}}"}`, status: 405, code: CodeMethodNotAllowed},
		{name: "text/plain", contentType: "text/plain", body: `{"query":"{viewer{id}}"}`, status: 415, code: CodeUnsupportedMediaType},
		{name: "application/graphql", contentType: "application/graphql", body: `{viewer{id}}`, status: 415, code: CodeUnsupportedMediaType},
		{name: "form", contentType: "application/x-www-form-urlencoded", body: `query=%7Bviewer%7Bid%7D%7D`, status: 415, code: CodeUnsupportedMediaType},
		{name: "no content type", body: `{"query":"{viewer{id}}"}`, status: 415, code: CodeUnsupportedMediaType},
		{name: "latin-1", contentType: "application/json; charset=iso-8859-1", body: `{"query":"{viewer{id}}"}`, status: 415, code: CodeUnsupportedMediaType},
		{name: "oversized body", contentType: "application/json", body: big, status: 413, code: CodePayloadTooLarge},
		{name: "oversized chunked body", contentType: "application/json", body: big, chunked: true, status: 413, code: CodePayloadTooLarge},
		{name: "malformed JSON", contentType: "application/json", body: `{"query": "{ viewer { id } }"`, status: 400, code: CodeBadRequest, message: "not a JSON object"},
		{name: "trailing data", contentType: "application/json", body: `{"query": "{ viewer { id } }"} {}`, status: 400, code: CodeBadRequest},
		{name: "JSON string", contentType: "application/json", body: `"{ viewer { id } }"`, status: 400, code: CodeBadRequest},
		{name: "JSON null", contentType: "application/json", body: `null`, status: 400, code: CodeBadRequest},
		{name: "batch", contentType: "application/json", body: `[{"query": "{ viewer { id } }"}]`, status: 400, code: CodeBadRequest, message: "batched"},
		{name: "query twice", contentType: "application/json", body: `{"query": "{ viewer { id } }", "query": "mutation { markAllNotificationsRead }"}`, status: 400, code: CodeBadRequest, message: "more than once"},
		{name: "a variable not UTF-8", contentType: "application/json", body: "{\"query\": \"query($n: String) { viewer { id } }\", \"variables\": {\"n\": \"\xff\"}}", status: 400, code: CodeBadRequest, message: "UTF-8"},
		{name: "a lone surrogate", contentType: "application/json", body: `{"query": "{ viewer { id } }", "variables": {"n": "\udc00"}}`, status: 400, code: CodeBadRequest, message: "UTF-8"},
		{name: "a variable twice", contentType: "application/json", body: `{"query": "query($n: Int) { viewer { id } }", "variables": {"n": 1, "n": 2}}`, status: 400, code: CodeBadRequest, message: "more than once"},
		{name: "missing query", contentType: "application/json", body: `{"variables": {}}`, status: 400, code: CodeBadRequest, message: "no query"},
		{name: "empty query", contentType: "application/json", body: `{"query": "  "}`, status: 400, code: CodeBadRequest, message: "no query"},
		{name: "query not a string", contentType: "application/json", body: `{"query": {"viewer": "id"}}`, status: 400, code: CodeBadRequest, message: "query must be a string"},
		{name: "variables not an object", contentType: "application/json", body: `{"query": "{ viewer { id } }", "variables": [1]}`, status: 400, code: CodeBadRequest, message: "variables"},
		{name: "operationName not a string", contentType: "application/json", body: `{"query": "{ viewer { id } }", "operationName": 3}`, status: 400, code: CodeBadRequest, message: "operationName"},
		{name: "syntax error", contentType: "application/json", body: `{"query": "{ viewer { id }"}`, status: 400, code: CodeParseFailed, message: "syntax error"},
		{name: "unknown field", contentType: "application/json", body: `{"query": "{ viewer { orders { number } } }"}`, status: 400, code: CodeValidationFailed, message: "Cannot query field"},
		{name: "wrong variable type", contentType: "application/json", body: `{"query": "query($n: Int) { viewer { enrolledCourses(first: $n) { totalCount } } }", "variables": {"n": "ten"}}`, status: 400, code: CodeBadUserInput, message: "$n"},
		{name: "variable out of range", contentType: "application/json", body: `{"query": "query($n: Int) { viewer { enrolledCourses(first: $n) { totalCount } } }", "variables": {"n": 3000000000}}`, status: 400, code: CodeBadUserInput},
		{name: "fractional Int", contentType: "application/json", body: `{"query": "query($n: Int) { viewer { enrolledCourses(first: $n) { totalCount } } }", "variables": {"n": 2.5}}`, status: 400, code: CodeBadUserInput},
		{name: "missing required variable", contentType: "application/json", body: `{"query": "mutation($id: ID!) { markNotificationRead(id: $id) { id } }"}`, status: 400, code: CodeBadUserInput, message: "ID!"},
		{name: "null required variable", contentType: "application/json", body: `{"query": "mutation($id: ID!) { markNotificationRead(id: $id) { id } }", "variables": {"id": null}}`, status: 400, code: CodeBadUserInput, message: "null"},
		{name: "introspection at a mutation's root", contentType: "application/json", body: `{"query": "mutation { __schema { queryType { name } } }"}`, status: 400, code: CodeValidationFailed, message: "root of a query"},
		{name: "__type at a mutation's root through a fragment", contentType: "application/json", body: `{"query": "mutation { ...M } fragment M on Mutation { __type(name: \"Query\") { name } }"}`, status: 400, code: CodeValidationFailed, message: "root of a query"},
		{name: "boolean as string", contentType: "application/json", body: `{"query": "query($u: Boolean) { notifications(unreadOnly: $u) { totalCount } }", "variables": {"u": "yes"}}`, status: 400, code: CodeBadUserInput},
		{name: "unknown operation", contentType: "application/json", body: `{"query": "query A { viewer { id } } query B { viewer { name } }", "operationName": "C"}`, status: 400, code: CodeOperationResolution},
		{name: "two operations, no name", contentType: "application/json", body: `{"query": "query A { viewer { id } } query B { viewer { name } }"}`, status: 400, code: CodeOperationResolution},
		{name: "subscription", contentType: "application/json", body: `{"query": "subscription { viewer { id } }"}`, status: 400},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			method := tc.method
			if method == "" {
				method = http.MethodPost
			}
			req := httptest.NewRequest(method, testOrigin+"/member/graphql", strings.NewReader(tc.body))
			if tc.chunked {
				req.ContentLength = -1
			}
			if tc.contentType != "" {
				req.Header.Set("Content-Type", tc.contentType)
			}
			req.Header.Set("Authorization", "Bearer "+readWrite)
			r := api.do(req)
			if r.status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.raw)
			}
			if len(r.Errors) == 0 || r.Data != nil {
				t.Fatalf("want a GraphQL error response without data: %s", r.raw)
			}
			if tc.code != "" && r.codes()[0] != tc.code {
				t.Errorf("code %v, want %s: %s", r.codes(), tc.code, r.raw)
			}
			if !strings.Contains(r.Errors[0].Message, tc.message) {
				t.Errorf("message %q does not say %q", r.Errors[0].Message, tc.message)
			}
			if !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
				t.Errorf("Content-Type %q", r.header.Get("Content-Type"))
			}
			if tc.status == 405 && r.header.Get("Allow") != "POST" {
				t.Errorf("Allow %q", r.header.Get("Allow"))
			}
			if api.store.count("UserByID") != 0 {
				t.Error("a refused request reached the store")
			}
		})
	}
}

// operationName picks the operation; variables reach it, with defaults.
func TestMemberAPIOperationNameAndVariables(t *testing.T) {
	api := newTestAPI(t, seededFake(), nil)
	doc := `query Courses($n: Int = 1, $after: String) { viewer { enrolledCourses(first: $n, after: $after) { nodes { slug } pageInfo { endCursor } } } }
		query Me { viewer { name } }`
	r := api.post(readOnly, doc, nil, "Me")
	if r.status != 200 || path(r.Data, "viewer", "name") != "Mem Ber" || path(r.Data, "viewer", "enrolledCourses") != nil {
		t.Fatalf("operationName Me: %d %s", r.status, r.raw)
	}
	r = api.post(readOnly, doc, nil, "Courses")
	if got := path(r.Data, "viewer", "enrolledCourses", "nodes"); !cmp.Equal(got, []any{map[string]any{"slug": "one"}}) {
		t.Fatalf("the default $n = 1: %s", r.raw)
	}
	cursor := path(r.Data, "viewer", "enrolledCourses", "pageInfo", "endCursor")
	r = api.post(readOnly, doc, map[string]any{"n": 5, "after": cursor}, "Courses")
	if got := path(r.Data, "viewer", "enrolledCourses", "nodes"); !cmp.Equal(got, []any{map[string]any{"slug": "two"}}) {
		t.Fatalf("variables n=5, after=%v: %s", cursor, r.raw)
	}
	// GraphQL over HTTP: a client that asks for the newer media type gets it.
	req := api.request(readOnly, "application/json", []byte(`{"query": "{ viewer { id } }"}`))
	req.Header.Set("Accept", "application/graphql-response+json, application/json;q=0.9")
	if res := api.do(req); res.header.Get("Content-Type") != "application/graphql-response+json; charset=utf-8" || res.status != 200 {
		t.Fatalf("Accept graphql-response+json: %d %q", res.status, res.header.Get("Content-Type"))
	}
}

// Scopes are decided before execution: a mutation needs account:write, a
// query account:read; the 403 names the scope so that OAuth and MCP clients
// can step up. Nothing runs.
func TestMemberAPIScopes(t *testing.T) {
	const mutation = `mutation { markAllNotificationsRead }`
	tests := []struct {
		name, token, query string
		status             int
		scope              string
	}{
		{"mutation with account:read only", readOnly, mutation, 403, "account:write"},
		{"mutation with operator scopes", operator, mutation, 403, "account:write"},
		{"named mutation among queries", readOnly, `query Q { viewer { id } } mutation M { markAllNotificationsRead }`, 403, "account:write"},
		{"query with account:write only", writeOnly, viewerQuery, 403, "account:read"},
		{"query with operator scopes", operator, viewerQuery, 403, "account:read"},
		{"introspection with operator scopes", operator, `{ __schema { queryType { name } } }`, 403, "account:read"},
		{"mutation with account:write", writeOnly, mutation, 200, ""},
		{"query with account:read", readOnly, viewerQuery, 200, ""},
		// What a mutation returns is read access: account:write alone
		// may see ids, never a notification's contents.
		{"marking, ids only, with account:write", writeOnly, `mutation { markNotificationRead(id: "22") { id __typename } }`, 200, ""},
		{"marking and reading with account:write", writeOnly, `mutation { markNotificationRead(id: "22") { id title body } }`, 403, "account:read account:write"},
		{"reading through an alias", writeOnly, `mutation { a: markNotificationRead(id: "21") { id } b: markNotificationRead(id: "22") { url } }`, 403, "account:read account:write"},
		{"reading through a fragment", writeOnly, `mutation { markNotificationRead(id: "22") { ...N } } fragment N on Notification { id ... on Notification { createdAt } }`, 403, "account:read account:write"},
		{"reading a subscription with account:write", writeOnly, `mutation { updateNotificationSubscription(topic: "course_updates", channel: "email", enabled: false) { enabled } }`, 403, "account:read account:write"},
		{"marking and reading with both", readWrite, `mutation { markNotificationRead(id: "22") { id title } }`, 200, ""},
		// A block string holding an escaped triple quote ends there for
		// graphql-go but not for the GraphQL spec: a document built on
		// that would be one operation to the scope check and another to
		// graphql-go, so it is refused before either runs.
		{"reading hidden in a block string", writeOnly, `mutation M { y: markNotificationRead(id:"""\""") @skip(if:true) {id} n: markNotificationRead(id:"22") { id title body url } z: markNotificationRead(id:"""` + "\n" + `) @skip(if:true) {id} n: markNotificationRead(id:"22") { id } }` + "\n" + `""") @skip(if:true) {id} } #"""` + "\n", 400, ""},
		{"a mutation hidden in a block string", readOnly, `query Q($a:String="""\""") { notifications(after:$a){totalCount} }` + "\n" + `mutation M { markAllNotificationsRead z: markNotificationRead(id:"""` + "\n" + `) { __typename } query M { __typename }` + "\n" + `""") @skip(if:true) {id} } #"""` + "\n", 400, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			store := seededFake()
			api := newTestAPI(t, store, nil)
			var r *gqlResult
			if strings.Contains(tc.query, "query Q") {
				r = api.post(tc.token, tc.query, nil, "M")
			} else {
				r = api.post(tc.token, tc.query, nil)
			}
			if r.status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.raw)
			}
			if tc.status == 400 {
				if codes := r.codes(); len(codes) != 1 || codes[0] != CodeParseFailed {
					t.Errorf("codes %v, want %s: %s", codes, CodeParseFailed, r.raw)
				}
				if strings.Contains(r.raw, "second") || store.count("MarkAllNotificationsRead")+store.count("MarkNotificationRead") != 0 {
					t.Errorf("a refused document ran: %s", r.raw)
				}
				return
			}
			if tc.status != 403 {
				return
			}
			www := r.header.Get("WWW-Authenticate")
			for _, want := range []string{`error="insufficient_scope"`, `scope="` + tc.scope + `"`, `resource_metadata="` + testOrigin + `/.well-known/oauth-protected-resource"`} {
				if !strings.Contains(www, want) {
					t.Errorf("WWW-Authenticate %q lacks %s", www, want)
				}
			}
			if store.count("MarkAllNotificationsRead")+store.count("MarkNotificationRead")+store.count("SetNotificationSubscription")+store.count("UserByID") != 0 {
				t.Error("a request refused for its scope ran")
			}
		})
	}
}

// A token outlives its holder's role: whoever has no role at the site any
// more is refused before anything runs; when the roles cannot be read the
// answer is 503, never a guess.
func TestMemberAPIRoleAtTheSite(t *testing.T) {
	store := seededFake()
	api := newTestAPI(t, store, nil)
	if r := api.post(readWrite, viewerQuery, nil); r.status != 200 {
		t.Fatalf("the member with a role: %d %s", r.status, r.raw)
	}
	store.resetCounts()
	r := api.post(otherUser+"@"+readWrite, viewerQuery, nil)
	if r.status != 403 || !strings.Contains(r.raw, "no longer holds a role") ||
		!strings.Contains(r.header.Get("WWW-Authenticate"), `error="insufficient_scope"`) {
		t.Fatalf("a token of a person without a role: %d %s %q", r.status, r.raw, r.header.Get("WWW-Authenticate"))
	}
	if store.count("UserByID")+store.count("ListEnrollments") != 0 {
		t.Error("a request refused for the role ran")
	}
	store.fail["RolesAt"] = fmt.Errorf("%w: dial tcp 10.0.0.7:6379: secret_key refused", storage.ErrUnavailable)
	r = api.post(readWrite, viewerQuery, nil)
	if r.status != 503 || !strings.Contains(r.raw, "temporarily_unavailable") || strings.Contains(r.raw, "secret_key") {
		t.Fatalf("roles unreadable: %d %s", r.status, r.raw)
	}
}

// No token or a bad one: 401 invalid_token pointing at the metadata.
func TestMemberAPIRequiresAToken(t *testing.T) {
	api := newTestAPI(t, seededFake(), nil)
	for _, token := range []string{"", "bad"} {
		r := api.do(api.request(token, "application/json", []byte(`{"query": "{ viewer { id } }"}`)))
		www := r.header.Get("WWW-Authenticate")
		if r.status != 401 || !strings.Contains(www, `resource_metadata="`+testOrigin+`/.well-known/oauth-protected-resource"`) || !strings.Contains(www, `error="invalid_token"`) {
			t.Fatalf("token %q: %d %q %s", token, r.status, www, r.raw)
		}
	}
}

// first defaults to 20, may not exceed 100 and must be positive; cursors
// must be this connection's.
func TestMemberAPIPageArguments(t *testing.T) {
	api := newTestAPI(t, seededFake(), nil)
	notificationCursor := encodeCursor(kindNotification, 22)
	tests := []struct {
		name, args string
		ok         bool
	}{
		{"default", "", true},
		{"100", "(first: 100)", true},
		{"101", "(first: 101)", false},
		{"0", "(first: 0)", false},
		{"negative", "(first: -1)", false},
		{"not base64", `(after: "%%%")`, false},
		{"padded base64", `(after: "` + encodeCursor(kindEnrollment, 1) + `==")`, false},
		{"another connection's cursor", `(after: "` + notificationCursor + `")`, false},
		{"non-canonical id", `(after: "` + b64("enrollment:01") + `")`, false},
		{"zero id", `(after: "` + b64("enrollment:0") + `")`, false},
		{"huge id", `(after: "` + b64("enrollment:99999999999999999999") + `")`, false},
		{"no kind", `(after: "` + b64("1") + `")`, false},
		{"own cursor", `(after: "` + encodeCursor(kindEnrollment, 1) + `")`, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := api.post(readOnly, `{ viewer { enrolledCourses`+tc.args+` { totalCount } } }`, nil)
			if r.status != 200 {
				t.Fatalf("status %d: %s", r.status, r.raw)
			}
			if tc.ok {
				if len(r.Errors) != 0 {
					t.Fatalf("errors: %s", r.raw)
				}
				return
			}
			if cmp.Diff([]string{CodeBadUserInput}, r.codes()) != "" || !cmp.Equal(r.Errors[0].Path, []any{"viewer", "enrolledCourses"}) {
				t.Fatalf("want one BAD_USER_INPUT error at viewer.enrolledCourses: %s", r.raw)
			}
		})
	}
}

// notificationSubscriptions is a connection like the others: first is
// bounded the same way, pages follow endCursor in topic, channel order, and
// only its own cursors are accepted.
func TestMemberAPINotificationSubscriptionsPages(t *testing.T) {
	store := seededFake()
	store.subs = append(store.subs,
		storage.NotificationSubscription{SiteID: testSiteID, UserID: testUser, Topic: "announcements", Channel: "push", Enabled: false},
		storage.NotificationSubscription{SiteID: testSiteID, UserID: testUser, Topic: "course_updates", Channel: "push", Enabled: true},
		storage.NotificationSubscription{SiteID: testSiteID, UserID: otherUser, Topic: "aaa", Channel: "email", Enabled: true},
		storage.NotificationSubscription{SiteID: 9, UserID: testUser, Topic: "aaa", Channel: "email", Enabled: true},
	)
	api := newTestAPI(t, store, nil)
	const doc = `query S($after: String) { notificationSubscriptions(first: 2, after: $after) {
		nodes { topic channel enabled } pageInfo { hasNextPage endCursor } totalCount } }`
	var got []string
	var after any
	for page := 0; page < 3; page++ {
		r := api.post(readOnly, doc, map[string]any{"after": after})
		if r.status != 200 || len(r.Errors) != 0 {
			t.Fatalf("page %d: %d %s", page, r.status, r.raw)
		}
		if n := path(r.Data, "notificationSubscriptions", "totalCount"); n != 4.0 {
			t.Fatalf("totalCount %v; want the member's 4 at this site", n)
		}
		for _, n := range path(r.Data, "notificationSubscriptions", "nodes").([]any) {
			m := n.(map[string]any)
			got = append(got, m["topic"].(string)+"/"+m["channel"].(string))
		}
		more := path(r.Data, "notificationSubscriptions", "pageInfo", "hasNextPage").(bool)
		after = path(r.Data, "notificationSubscriptions", "pageInfo", "endCursor")
		if want := page == 0; more != want {
			t.Fatalf("page %d hasNextPage %v; want %v", page, more, want)
		}
		if !more {
			break
		}
	}
	want := []string{"announcements/push", "course_updates/email", "course_updates/push", "legacy_digest/sms"}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("settings over the pages (-want +got):\n%s", d)
	}

	for _, tc := range []struct{ name, args string }{
		{"101", "(first: 101)"},
		{"0", "(first: 0)"},
		{"another connection's cursor", `(after: "` + encodeCursor(kindNotification, 22) + `")`},
		{"made up", `(after: "` + b64("notification-subscription:a") + `")`},
		{"empty topic", `(after: "` + b64("notification-subscription::email") + `")`},
		{"non-canonical escape", `(after: "` + b64("notification-subscription:%61:email") + `")`},
		{"too long", `(after: "` + strings.Repeat("A", maxSubscriptionCursor+1) + `")`},
	} {
		r := api.post(readOnly, `{ notificationSubscriptions`+tc.args+` { totalCount } }`, nil)
		if r.status != 200 || cmp.Diff([]string{CodeBadUserInput}, r.codes()) != "" {
			t.Errorf("%s: want one BAD_USER_INPUT error: %d %s", tc.name, r.status, r.raw)
		}
	}
}

// A setting's cursor round-trips whatever its topic and channel hold.
func TestMemberAPISubscriptionCursors(t *testing.T) {
	for _, s := range []storage.NotificationSubscription{
		{Topic: "course_updates", Channel: "email"},
		{Topic: "a:b", Channel: "c:d"},
		{Topic: "with space/slash%", Channel: ""},
		{Topic: strings.Repeat("t", 64), Channel: strings.Repeat("c", 32)},
	} {
		c := encodeSubscriptionCursor(&s)
		topic, channel, ok := decodeSubscriptionCursor(c)
		if !ok || topic != s.Topic || channel != s.Channel {
			t.Errorf("%q/%q: %q decodes to %q/%q %v", s.Topic, s.Channel, c, topic, channel, ok)
		}
		if _, ok := decodeCursor(kindNotification, c); ok {
			t.Errorf("%q is accepted by notifications", c)
		}
	}
}

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// Cursors are opaque, round-trip, and belong to one connection.
func TestMemberAPICursors(t *testing.T) {
	for _, kind := range []string{kindEnrollment, kindNotification} {
		for _, id := range []int64{1, 42, 1<<63 - 1} {
			c := encodeCursor(kind, id)
			if got, ok := decodeCursor(kind, c); !ok || got != id {
				t.Errorf("%s %d: %q decodes to %d %v", kind, id, c, got, ok)
			}
			if _, ok := decodeCursor(kindProduct, c); ok {
				t.Errorf("%q is accepted by another connection", c)
			}
		}
	}
}

// Store failures never show their text: ErrUnavailable is 503 UNAVAILABLE
// with Retry-After, anything else INTERNAL_SERVER_ERROR; both are logged.
func TestMemberAPIStoreErrorsLeakNothing(t *testing.T) {
	secret := errors.New(`pq: relation "secret_table" does not exist at 10.0.0.7`)
	tests := []struct {
		name   string
		method string
		err    error
		query  string
		status int
		code   string
	}{
		{"unavailable", "ListEnrollments", fmt.Errorf("%w: dial tcp 10.0.0.7:5432: secret_table refused", storage.ErrUnavailable), `{ viewer { enrolledCourses { totalCount } } }`, 503, CodeUnavailable},
		{"internal", "ListEnrollments", secret, `{ viewer { enrolledCourses { totalCount } } }`, 200, CodeInternal},
		{"internal in batch", "LastWatched", secret, `{ viewer { enrolledCourses { nodes { lastWatchedLecture { lectureId } } } } }`, 200, CodeInternal},
		{"internal in user", "UserByID", secret, `{ viewer { name email } }`, 200, CodeInternal},
		{"internal in mutation", "MarkAllNotificationsRead", secret, `mutation { markAllNotificationsRead }`, 200, CodeInternal},
		{"unavailable in mutation", "MarkNotificationRead", storage.ErrUnavailable, `mutation { markNotificationRead(id: "22") { id } }`, 503, CodeUnavailable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			store := seededFake()
			store.fail[tc.method] = tc.err
			api := newTestAPI(t, store, nil)
			r := api.post(readWrite, tc.query, nil)
			if r.status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.raw)
			}
			if len(r.Errors) == 0 || r.codes()[0] != tc.code {
				t.Fatalf("codes %v, want %s: %s", r.codes(), tc.code, r.raw)
			}
			if strings.Contains(r.raw, "secret_table") || strings.Contains(r.raw, "10.0.0.7") || strings.Contains(r.raw, "storage:") {
				t.Fatalf("the response shows internals: %s", r.raw)
			}
			if tc.status == 503 && r.header.Get("Retry-After") == "" {
				t.Error("503 without Retry-After")
			}
			if !strings.Contains(api.logText(), "secret_table") && tc.code == CodeInternal {
				t.Errorf("the cause was not logged:\n%s", api.logText())
			}
		})
	}
}

// A panicking resolver answers "internal error", logged with its stack.
func TestMemberAPIPanicsLeakNothing(t *testing.T) {
	store := seededFake()
	store.panic["UnreadNotificationCount"] = true
	api := newTestAPI(t, store, nil)
	r := api.post(readOnly, `{ unreadNotificationCount viewer { id } }`, nil)
	if r.status != 200 || cmp.Diff([]string{CodeInternal}, r.codes()) != "" || strings.Contains(r.raw, "secret detail") {
		t.Fatalf("%d %s", r.status, r.raw)
	}
	if !strings.Contains(api.logText(), "secret detail") {
		t.Errorf("the panic was not logged:\n%s", api.logText())
	}
}

// What a mutation returns to a token without account:read (which the
// handler refuses before execution) cannot be read from the resolver
// either: only the id.
func TestMemberAPIMarkedNotificationUnreadableWithoutAccountRead(t *testing.T) {
	store := seededFake()
	for _, tc := range []struct {
		scopes   []string
		readable bool
	}{{[]string{"account:write"}, false}, {[]string{"account:read", "account:write"}, true}} {
		rq := &request{store: store, now: time.Now, site: testSite, token: &bearer.Token{Site: testSiteID, Subject: testUser, Scopes: tc.scopes}}
		n, err := resolver{}.MarkNotificationRead(withRequest(t.Context(), rq), struct{ ID graphql.ID }{"22"})
		if err != nil {
			t.Fatal(err)
		}
		if n.ID() != "22" {
			t.Errorf("%v: id %s", tc.scopes, n.ID())
		}
		title, err := n.Title()
		_, bodyErr := n.Body()
		if tc.readable != (err == nil && bodyErr == nil) || !tc.readable && title != "" && err == nil {
			t.Errorf("%v: title %q, errors %v, %v", tc.scopes, title, err, bodyErr)
		}
	}
}

// unreadOnly is a nullable Boolean with a default: null, or a variable left
// out, means false, as the GraphQL spec coerces it.
func TestMemberAPIUnreadOnlyNull(t *testing.T) {
	api := newTestAPI(t, seededFake(), nil)
	for _, tc := range []struct {
		query string
		vars  map[string]any
	}{
		{`{ notifications(unreadOnly: null) { totalCount } }`, nil},
		{`query($u: Boolean) { notifications(unreadOnly: $u) { totalCount } }`, map[string]any{}},
		{`query($u: Boolean) { notifications(unreadOnly: $u) { totalCount } }`, map[string]any{"u": nil}},
	} {
		r := api.post(readOnly, tc.query, tc.vars)
		if r.status != 200 || len(r.Errors) != 0 || fmt.Sprint(path(r.Data, "notifications", "totalCount")) != "2" {
			t.Errorf("%s %v: %d %s", tc.query, tc.vars, r.status, r.raw)
		}
	}
}

// Mutations touch only the member's own rows at this site.
func TestMemberAPIMutations(t *testing.T) {
	store := seededFake()
	api := newTestAPI(t, store, nil)
	r := api.post(readWrite, `mutation { markNotificationRead(id: "22") { id readAt } }`, nil)
	if got := path(r.Data, "markNotificationRead", "readAt"); got != "2026-05-02T00:00:00Z" {
		t.Fatalf("markNotificationRead: %s", r.raw)
	}
	for _, id := range []string{"23", "24", "999", "abc", "-1", "0", "022", "+22", " 22"} {
		r := api.post(readWrite, `mutation($id: ID!) { markNotificationRead(id: $id) { id title } }`, map[string]any{"id": id})
		if r.status != 200 || cmp.Diff([]string{CodeNotFound}, r.codes()) != "" || r.Data != nil && path(r.Data, "markNotificationRead") != nil {
			t.Fatalf("id %s: %s", id, r.raw)
		}
		if strings.Contains(r.raw, "secret") || strings.Contains(r.raw, "other site") {
			t.Fatalf("id %s shows another member's data: %s", id, r.raw)
		}
	}
	if store.notifications[2].ReadAt != nil || store.notifications[3].ReadAt != nil {
		t.Fatal("another member's (or another site's) notification was marked read")
	}
	// The subscriptions: a known topic, an existing odd one, and refusals.
	for _, tc := range []struct {
		topic, channel string
		ok             bool
	}{
		{"announcements", "push", true},
		{"legacy_digest", "sms", true},
		{"made_up", "email", false},
		{"announcements", "carrier_pigeon", false},
		{"Announcements", "email", false},
		{strings.Repeat("a", 65), "email", false},
	} {
		r := api.post(readWrite, `mutation($t: String!, $c: String!) { updateNotificationSubscription(topic: $t, channel: $c, enabled: false) { topic channel enabled } }`,
			map[string]any{"t": tc.topic, "c": tc.channel})
		if tc.ok != (len(r.Errors) == 0) {
			t.Fatalf("%s/%s: %s", tc.topic, tc.channel, r.raw)
		}
		if !tc.ok && r.codes()[0] != CodeBadUserInput {
			t.Fatalf("%s/%s: %s", tc.topic, tc.channel, r.raw)
		}
	}
	r = api.post(readWrite, `mutation { markAllNotificationsRead }`, nil)
	if path(r.Data, "markAllNotificationsRead") != 0.0 {
		t.Fatalf("markAllNotificationsRead after marking the only unread one: %s", r.raw)
	}
}

// enrolledCourses(first: 100) with lastWatchedLecture is one ListEnrollments
// and one LastWatched call, whatever the page size.
func TestMemberAPIBatchesLastWatched(t *testing.T) {
	for _, n := range []int{1, 100} {
		store := seededFake()
		store.enrollments, store.progress = nil, nil
		for i := 1; i <= n; i++ {
			store.enrollments = append(store.enrollments, storage.EnrollmentView{ID: int64(i), CourseID: int64(1000 + i), CourseSlug: fmt.Sprint("c", i)})
			store.enrollUser[int64(i)] = testUser
			store.progress = append(store.progress, storage.LectureProgress{SiteID: testSiteID, UserID: testUser, CourseID: int64(1000 + i), LectureID: int64(i)})
		}
		api := newTestAPI(t, store, nil)
		r := api.post(readOnly, `{ viewer { enrolledCourses(first: 100) { nodes { slug lastWatchedLecture { lectureId positionSeconds } } } } }`, nil)
		nodes, _ := path(r.Data, "viewer", "enrolledCourses", "nodes").([]any)
		if len(nodes) != n || path(nodes[n-1], "lastWatchedLecture", "lectureId") != fmt.Sprint(n) {
			t.Fatalf("%d enrollments: %s", n, r.raw)
		}
		if a, b := store.count("ListEnrollments"), store.count("LastWatched"); a != 1 || b != 1 {
			t.Fatalf("%d enrollments: ListEnrollments %d calls, LastWatched %d; want 1 and 1", n, a, b)
		}
		// Without lastWatchedLecture, no LastWatched at all.
		store.resetCounts()
		api.post(readOnly, `{ viewer { enrolledCourses(first: 100) { nodes { slug } } } }`, nil)
		if store.count("LastWatched") != 0 {
			t.Fatal("LastWatched called for a query that does not select lastWatchedLecture")
		}
	}
}

// Profile and roles are read once per request, however many aliases ask.
func TestMemberAPIMemoizesViewer(t *testing.T) {
	store := seededFake()
	api := newTestAPI(t, store, nil)
	r := api.post(readOnly, `{ a: viewer { name email schools { id } } b: viewer { name schools { name } } }`, nil)
	if r.status != 200 || len(r.Errors) != 0 {
		t.Fatal(r.raw)
	}
	if store.count("UserByID") != 1 || store.count("SitesOfUser") != 1 {
		t.Fatalf("UserByID %d, SitesOfUser %d; want 1 each", store.count("UserByID"), store.count("SitesOfUser"))
	}
}

// Every error of a response has extensions.code.
func TestMemberAPIErrorsHaveCodes(t *testing.T) {
	api := newTestAPI(t, seededFake(), nil)
	bodies := []string{
		`{"query": "{ viewer { enrolledCourses(first: 1000) { totalCount } } }"}`,
		`{"query": "{ nope }"}`,
		`{"query": "{"}`,
	}
	for _, b := range bodies {
		r := api.do(api.request(readOnly, "application/json", []byte(b)))
		var raw struct {
			Errors []map[string]any `json:"errors"`
		}
		if err := json.Unmarshal([]byte(r.raw), &raw); err != nil || len(raw.Errors) == 0 {
			t.Fatalf("%s: %s", b, r.raw)
		}
		for _, e := range raw.Errors {
			if c, _ := path(e, "extensions", "code").(string); c == "" {
				t.Errorf("%s: error without a code: %v", b, e)
			}
		}
	}
}

func TestMemberAPINewNeedsStoreAndVerifier(t *testing.T) {
	if _, err := New(Options{}); err == nil {
		t.Fatal("New without a store and a verifier succeeded")
	}
}

// A failed batch fails each node of its page, and is logged once.
func TestMemberAPIBatchFailureLoggedOnce(t *testing.T) {
	store := seededFake()
	store.fail["LastWatched"] = errors.New("pq: connection reset by peer 10.0.0.7")
	api := newTestAPI(t, store, nil)
	r := api.post(readOnly, `{ viewer { enrolledCourses { nodes { slug lastWatchedLecture { lectureId } } } } }`, nil)
	if r.status != 200 || cmp.Diff([]string{CodeInternal, CodeInternal}, r.codes()) != "" || strings.Contains(r.raw, "10.0.0.7") {
		t.Fatalf("%d %s", r.status, r.raw)
	}
	if n := strings.Count(api.logText(), "10.0.0.7"); n != 1 {
		t.Fatalf("the batch failure was logged %d times:\n%s", n, api.logText())
	}
}

// Without a site in the context (the tenant middleware did not run) the
// handler touches nothing.
func TestMemberAPINeedsASite(t *testing.T) {
	store := seededFake()
	h, err := New(Options{Store: store, Verifier: fakeAuth{}})
	if err != nil {
		t.Fatal(err)
	}
	api := &testAPI{t: t, h: h}
	r := api.post(readOnly, viewerQuery, nil)
	if r.status != 404 || store.count("UserByID") != 0 {
		t.Fatalf("%d %s", r.status, r.raw)
	}
}
