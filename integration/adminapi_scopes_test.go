package integration

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lectern/lectern/adminapi"
	"github.com/lectern/lectern/authserver/scope"
	"github.com/lectern/lectern/internal/demo"
)

// admFixture holds ids that the per-scope operations need, made at Demo
// Academy with an owner token that has every operator scope.
type admFixture struct {
	all      string // the owner's token with every operator scope
	courseID int64
	planID   int64
}

func admSetup(t *testing.T, ts *testServer) *admFixture {
	t.Helper()
	f := &admFixture{all: admOwnerToken(t, ts, ts.academy(), scope.OperatorScopes()...)}
	c := admDo(t, ts, http.MethodPost, ts.academy(), "/courses", f.all, map[string]any{"slug": "fixture-course", "title": "Fixture"}).
		want(t, http.StatusCreated, "create the fixture course").obj(t)
	f.courseID = admID(t, c, "id")
	p := admDo(t, ts, http.MethodPost, ts.academy(), "/membership-plans", f.all, map[string]any{"slug": "fixture-plan", "title": "Plan", "interval": "year"}).
		want(t, http.StatusCreated, "create the fixture plan").obj(t)
	f.planID = admID(t, p, "id")
	return f
}

// admScopeCases: for every operator scope, one operation that needs it and
// succeeds with a token that has only it.
func admScopeCases(f *admFixture) []struct {
	scope, method, path string
	body                any
	status              int
} {
	id := func(n int64) string { return strconv.FormatInt(n, 10) }
	period := "?from=" + url.QueryEscape(time.Now().Add(-30*24*time.Hour).UTC().Format(time.RFC3339)) + "&to=" + url.QueryEscape(time.Now().Add(time.Hour).UTC().Format(time.RFC3339))
	return []struct {
		scope, method, path string
		body                any
		status              int
	}{
		{"courses:read", http.MethodGet, "/courses", nil, 200},
		{"courses:write", http.MethodPost, "/courses", map[string]any{"slug": "scoped-course", "title": "Scoped"}, 201},
		{"students:read", http.MethodGet, "/students", nil, 200},
		{"students:write", http.MethodPost, "/enrollments", map[string]any{"email": demo.OutsiderEmail, "courseId": f.courseID}, 201},
		{"members:read", http.MethodGet, "/members", nil, 200},
		{"members:write", http.MethodPost, "/members", map[string]any{"email": demo.OutsiderEmail, "role": "student"}, 200},
		{"analytics:read", http.MethodGet, "/analytics/sales" + period, nil, 200},
		{"curriculum:read", http.MethodGet, "/courses/" + id(f.courseID) + "/curriculum", nil, 200},
		{"curriculum:write", http.MethodPost, "/courses/" + id(f.courseID) + "/sections", map[string]any{"title": "Part one"}, 201},
		{"orders:read", http.MethodGet, "/orders", nil, 200},
		{"school:read", http.MethodGet, "/school", nil, 200},
		{"school:write", http.MethodPatch, "/school", map[string]any{"description": "Changed through the admin API."}, 200},
		{"appearance:read", http.MethodGet, "/appearance", nil, 200},
		{"appearance:write", http.MethodPut, "/appearance", map[string]any{"primaryColor": "#112233", "accentColor": "#445566", "backgroundColor": "#ffffff", "textColor": "#000000"}, 200},
		{"events:read", http.MethodGet, "/events", nil, 200},
		{"events:write", http.MethodPost, "/events", map[string]any{"slug": "scoped-event", "title": "E", "startsAt": "2030-01-01T10:00:00Z", "endsAt": "2030-01-01T11:00:00Z"}, 201},
		{"membership_plans:read", http.MethodGet, "/membership-plans", nil, 200},
		{"membership_plans:write", http.MethodPost, "/membership-plans", map[string]any{"slug": "scoped-plan", "title": "P", "interval": "month"}, 201},
		{"coupons:read", http.MethodGet, "/coupons", nil, 200},
		{"coupons:write", http.MethodPost, "/coupons", map[string]any{"code": "scoped10", "percentOff": 10}, 201},
		{"posts:read", http.MethodGet, "/posts", nil, 200},
		{"posts:write", http.MethodPost, "/posts", map[string]any{"slug": "scoped-post", "title": "Hello"}, 201},
		{"subscriptions:read", http.MethodGet, "/subscriptions", nil, 200},
		{"subscriptions:write", http.MethodPost, "/subscriptions", map[string]any{"email": demo.StudentEmail, "planId": f.planID, "currentPeriodEnd": "2031-01-01T00:00:00Z"}, 201},
		{"digital_products:read", http.MethodGet, "/digital-products", nil, 200},
		{"digital_products:write", http.MethodPost, "/digital-products", map[string]any{"slug": "scoped-product", "title": "P"}, 201},
		{"comments:read", http.MethodGet, "/comments", nil, 200},
		{"lecturers:read", http.MethodGet, "/lecturers", nil, 200},
		{"lecturers:write", http.MethodPost, "/lecturers", map[string]any{"slug": "scoped-lecturer", "name": "L"}, 201},
		{"storage:write", http.MethodPost, "/files", nil, 201}, // an upload
		{"forms:read", http.MethodGet, "/forms", nil, 200},
		{"pages:read", http.MethodGet, "/pages", nil, 200},
		{"pages:write", http.MethodPost, "/pages", map[string]any{"slug": "scoped-page", "title": "About"}, 201},
	}
}

// TestAdminScopes: for every operator scope, an operation succeeds with a
// token that has only that scope, and fails with 403 insufficient_scope
// (and a WWW-Authenticate challenge naming it) with a token that has every
// other operator scope.
func TestAdminScopes(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, nil)
		f := admSetup(t, ts)
		cases := admScopeCases(f)
		covered := map[string]bool{}
		for _, tc := range cases {
			covered[tc.scope] = true
		}
		for _, s := range scope.OperatorScopes() {
			if !covered[s] {
				t.Errorf("no case for the operator scope %s", s)
			}
		}
		for _, tc := range cases {
			t.Run(tc.scope, func(t *testing.T) {
				var others []string
				for _, s := range scope.OperatorScopes() {
					if s != tc.scope {
						others = append(others, s)
					}
				}
				with := admOwnerToken(t, ts, ts.academy(), tc.scope)
				without := admOwnerToken(t, ts, ts.academy(), others...)
				call := func(tok string) admResp {
					if tc.scope == "storage:write" {
						return admUpload(t, ts, ts.academy(), tok, "logo.png", "image/png", admPNG)
					}
					return admDo(t, ts, tc.method, ts.academy(), tc.path, tok, tc.body)
				}
				admInsufficientScope(t, call(without), tc.scope, tc.method+" "+tc.path+" without "+tc.scope)
				call(with).want(t, tc.status, tc.method+" "+tc.path+" with "+tc.scope)
			})
		}
	})
}

// admOperationPath fills an operation's path template with placeholder
// ids.
func admOperationPath(op adminapi.Operation) string {
	p := op.Path
	for strings.Contains(p, "{") {
		i, j := strings.Index(p, "{"), strings.Index(p, "}")
		v := "1"
		switch p[i+1 : j] {
		case "userId":
			v = "usr_nobody"
		case "role":
			v = "admin"
		case "clientId":
			v = "lct_nothing"
		}
		p = p[:i] + v + p[j+1:]
	}
	return p
}

// TestAdminEveryOperationRefusals walks every operation of the document:
// a token without the operation's scope gets 403 insufficient_scope naming
// it, a member token gets 403 insufficient_scope, a token of the other demo
// site gets 401 invalid_token, and no token gets 401.
func TestAdminEveryOperationRefusals(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	ops, err := adminapi.Operations()
	if err != nil {
		t.Fatal(err)
	}
	onlyComments := admOwnerToken(t, ts, ts.academy(), "comments:read")
	onlyPages := admOwnerToken(t, ts, ts.academy(), "pages:read")
	member := ts.studentToken(t, ts.academy()).AccessToken
	otherSite := admOwnerToken(t, ts, ts.open(), scope.OperatorScopes()...)
	for _, op := range ops {
		path := admOperationPath(op)
		what := op.Method + " " + path
		tok := onlyComments
		if op.Scopes[0] == "comments:read" {
			tok = onlyPages
		}
		admInsufficientScope(t, admDo(t, ts, op.Method, ts.academy(), path, tok, map[string]any{}), strings.Join(op.Scopes, " "), what+" without its scope")
		admInsufficientScope(t, admDo(t, ts, op.Method, ts.academy(), path, member, map[string]any{}), strings.Join(op.Scopes, " "), what+" with a member token")
		for _, tc := range []struct{ name, tok string }{{"Open School's token", otherSite}, {"no token", ""}} {
			r := admDo(t, ts, op.Method, ts.academy(), path, tc.tok, map[string]any{})
			r.want(t, http.StatusUnauthorized, what+" with "+tc.name)
			if wa := r.header.Get("WWW-Authenticate"); !strings.Contains(wa, `resource_metadata="`+ts.academy()) {
				t.Fatalf("%s with %s: WWW-Authenticate %q lacks the site's resource_metadata", what, tc.name, wa)
			}
		}
	}
	// And the other way round: Academy's token at Open School.
	academy := admOwnerToken(t, ts, ts.academy(), "courses:read")
	admDo(t, ts, http.MethodGet, ts.open(), "/courses", academy, nil).want(t, http.StatusUnauthorized, "Academy's token at Open School")
}
