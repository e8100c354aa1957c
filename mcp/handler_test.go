package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lectern/lectern/authserver/bearer"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

var (
	testSite  = &tenant.Site{ID: 1, Slug: "school", Name: "Test School", Origin: "https://school.example", Aliases: []string{"www.school.example"}, Variant: tenant.VariantOpen, UpdatedAt: time.Unix(1000, 0)}
	otherSite = &tenant.Site{ID: 2, Slug: "other", Name: "Other", Origin: "https://other.example", Variant: tenant.VariantVendor, UpdatedAt: time.Unix(1000, 0)}
	testNow   = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
)

func newFake() *fakeStore {
	f := &fakeStore{
		enrollments: map[string][]storage.EnrollmentView{
			"usr_member": {{ID: 1, CourseID: 1, CourseSlug: "go", CourseTitle: "Go", EnrolledAt: testNow.Add(-time.Hour)}},
		},
		notifications: []storage.Notification{
			{ID: 7, SiteID: 1, UserID: "usr_member", Kind: "k", Title: "Hello", CreatedAt: testNow},
			{ID: 8, SiteID: 1, UserID: "usr_other", Kind: "k", Title: "Someone else's", CreatedAt: testNow},
		},
		roles: map[string][]string{"usr_member": {"student"}, "usr_owner": {"owner"}, "usr_lecturer": {"lecturer"}},
	}
	for i := 1; i <= 60; i++ {
		f.courses = append(f.courses, storage.Course{ID: int64(i), SiteID: 1, Slug: fmt.Sprintf("course-%02d", i), Title: fmt.Sprintf("Course %d", i),
			Category: []string{"Data", "Code"}[i%2], PriceCents: 1000, Currency: "USD", Status: storage.StatusPublished})
	}
	f.courses[0].Slug, f.courses[0].Title = "go", "Go"
	f.courses = append(f.courses,
		storage.Course{ID: 100, SiteID: 1, Slug: "secret-draft", Title: "Secret Draft", Status: storage.StatusDraft, Currency: "USD"},
		storage.Course{ID: 200, SiteID: 2, Slug: "elsewhere", Title: "Elsewhere", Status: storage.StatusPublished, Currency: "EUR"},
	)
	return f
}

var testTokens = fakeAuth{
	"member":   {Site: 1, Subject: "usr_member", Scopes: []string{"openid", "account:read"}},
	"writer":   {Site: 1, Subject: "usr_member", Scopes: []string{"account:read", "account:write"}},
	"blind":    {Site: 1, Subject: "usr_member", Scopes: []string{"account:write"}},
	"operator": {Site: 1, Subject: "usr_owner", Scopes: []string{"openid", "courses:read", "students:read"}},
	"analyst":  {Site: 1, Subject: "usr_owner", Scopes: []string{"analytics:read"}},
	"lecturer": {Site: 1, Subject: "usr_lecturer", Scopes: []string{"courses:read", "students:read"}},
	"identity": {Site: 1, Subject: "usr_member", Scopes: []string{"openid", "email"}},
	"foreign":  {Site: 2, Subject: "usr_member", Scopes: []string{"account:read"}},
	"gone":     {Site: 1, Subject: "usr_nobody", Scopes: []string{"account:read"}},
}

// testServer serves h for testSite (or the site the X-Test-Site header
// names), as the tenant middleware would.
func testServer(t testing.TB, h http.Handler) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		site := testSite
		if r.Header.Get("X-Test-Site") == "other" {
			site = otherSite
		}
		h.ServeHTTP(w, r.WithContext(tenant.WithSite(r.Context(), site)))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func newTestHandler(f *fakeStore) *Handler {
	return New(Options{Store: f, Auth: testTokens, Now: func() time.Time { return testNow }})
}

type headerTransport struct {
	base http.RoundTripper
	hdr  http.Header
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.hdr {
		r.Header[k] = v
	}
	return h.base.RoundTrip(r)
}

func connect(t testing.TB, srv *httptest.Server, token string) *gomcp.ClientSession {
	t.Helper()
	hdr := http.Header{}
	if token != "" {
		hdr.Set("Authorization", "Bearer "+token)
	}
	client := gomcp.NewClient(&gomcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &gomcp.StreamableClientTransport{
		Endpoint: srv.URL, MaxRetries: -1,
		HTTPClient: &http.Client{Transport: headerTransport{http.DefaultTransport, hdr}},
	}, nil)
	if err != nil {
		t.Fatalf("connect with %q: %v", token, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func toolNames(t testing.TB, cs *gomcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tool := range res.Tools {
		out = append(out, tool.Name)
	}
	slices.Sort(out)
	return out
}

func call(t testing.TB, cs *gomcp.ClientSession, name string, args map[string]any, out any) *gomcp.CallToolResult {
	t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	res, err := cs.CallTool(context.Background(), &gomcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if out != nil && !res.IsError {
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatal(err)
		}
	}
	return res
}

func post(t testing.TB, srv *httptest.Server, token, body string, hdr ...string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] == "" {
			req.Header.Del(hdr[i])
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func callBody(name string) string {
	return `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"` + name + `","arguments":{}}}`
}

var (
	publicTools   = []string{"get_course", "get_pricing", "get_site_info", "list_events", "search_courses"}
	memberRead    = []string{"my_course_progress", "my_enrollments", "my_notifications", "my_purchases"}
	operatorTools = []string{"list_courses", "list_students", "recent_orders", "sales_summary"}
)

func sorted(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	slices.Sort(out)
	return out
}

// The tool list follows the caller: scopes, and roles at the site.
func TestMCPToolsFollowTheCaller(t *testing.T) {
	srv := testServer(t, newTestHandler(newFake()))
	for _, c := range []struct {
		token string
		want  []string
	}{
		{"", publicTools},
		{"identity", publicTools},
		{"member", sorted(publicTools, memberRead)},
		{"writer", sorted(publicTools, memberRead, []string{"mark_notification_read"})},
		// account:write alone reads nothing, and marking answers with the
		// notification: it needs account:read too.
		{"blind", publicTools},
		{"operator", sorted(publicTools, []string{"list_courses", "list_students"})},
		// A lecturer's role does not allow students:read, whatever the token says.
		{"lecturer", sorted(publicTools, []string{"list_courses"})},
		// No role at the site any more: the member scopes no longer count.
		{"gone", publicTools},
	} {
		if got := toolNames(t, connect(t, srv, c.token)); !slices.Equal(got, c.want) {
			t.Errorf("token %q: tools %v; want %v", c.token, got, c.want)
		}
	}
}

// Calling a tool the caller may not use is the HTTP challenge an MCP
// client acts on; access does not depend on it.
func TestMCPToolGate(t *testing.T) {
	srv := testServer(t, newTestHandler(newFake()))
	for _, c := range []struct {
		token, tool string
		status      int
		contains    []string
	}{
		{"", "my_enrollments", 401, []string{`error="invalid_token"`, `scope="account:read"`, `resource_metadata="https://school.example/.well-known/oauth-protected-resource"`}},
		{"", "sales_summary", 401, []string{`scope="analytics:read"`}},
		{"member", "mark_notification_read", 403, []string{`error="insufficient_scope"`, `scope="account:read account:write"`, "resource_metadata="}},
		{"blind", "mark_notification_read", 403, []string{`error="insufficient_scope"`, `scope="account:read account:write"`}},
		{"member", "list_courses", 403, []string{`scope="courses:read"`}},
		{"operator", "recent_orders", 403, []string{`scope="orders:read"`}},
		{"lecturer", "list_students", 403, []string{`scope="students:read"`}},
		{"gone", "my_enrollments", 403, []string{`scope="account:read"`}},
	} {
		resp, body := post(t, srv, c.token, callBody(c.tool))
		www := resp.Header.Get("WWW-Authenticate")
		if resp.StatusCode != c.status {
			t.Errorf("%q calls %s: %d %s; want %d", c.token, c.tool, resp.StatusCode, body, c.status)
		}
		for _, want := range c.contains {
			if !strings.Contains(www, want) {
				t.Errorf("%q calls %s: WWW-Authenticate %q lacks %s", c.token, c.tool, www, want)
			}
		}
	}
	resp, body := post(t, srv, "lecturer", callBody("list_students"))
	if !strings.Contains(body, "role") {
		t.Errorf("a role refusal does not say so: %d %s", resp.StatusCode, body)
	}
	// A batch (protocol 2025-03-26) with one refused call is refused whole.
	batch := `[{"jsonrpc":"2.0","id":1,"method":"tools/list"},` + callBody("my_notifications") + `]`
	if resp, _ := post(t, srv, "", batch, "MCP-Protocol-Version", "2025-03-26"); resp.StatusCode != 401 {
		t.Errorf("batch with a member tool: %d", resp.StatusCode)
	}
}

func TestMCPGateParsing(t *testing.T) {
	anon := anonymous
	member := newCaller(&bearer.Token{Scopes: []string{"account:read"}}, []string{"student"})
	for _, c := range []struct {
		body   string
		caller *caller
		want   string
	}{
		{callBody("my_enrollments"), anon, "my_enrollments"},
		{"  \n" + callBody("my_enrollments"), anon, "my_enrollments"},
		{callBody("my_enrollments"), member, ""},
		{callBody("mark_notification_read"), member, "mark_notification_read"},
		{callBody("search_courses"), anon, ""},
		{callBody("unknown_tool"), anon, ""},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, anon, ""},
		{`[` + callBody("search_courses") + `,` + callBody("list_students") + `]`, anon, "list_students"},
		{`{"method":"tools/call","params":"not an object"}`, anon, ""},
		{`not json`, anon, ""},
		{``, anon, ""},
		{`[1, 2]`, anon, ""},
	} {
		i, refused := gate([]byte(c.body), c.caller)
		got := ""
		if refused {
			got = registry[i].name
		}
		if got != c.want {
			t.Errorf("gate(%s) = %q; want %q", c.body, got, c.want)
		}
	}
}

// Whatever the gate misses, the caller's server has no such tool.
func FuzzMCPGate(f *testing.F) {
	f.Add(callBody("my_enrollments"))
	f.Add(`[` + callBody("list_students") + `]`)
	f.Add(`{"method":"tools/call","params":{"name":"my_enrollments","name":"x"}}`)
	f.Fuzz(func(t *testing.T, body string) {
		i, refused := gate([]byte(body), anonymous)
		if refused && anonymous.may(i) {
			t.Errorf("gate refused %s for %s", registry[i].name, body)
		}
	})
}

// An Authorization header is never silently ignored.
func TestMCPAuthentication(t *testing.T) {
	srv := testServer(t, newTestHandler(newFake()))
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`
	for _, c := range []struct {
		name, authz string
		want        int
	}{
		{"none", "", 200},
		{"valid", "Bearer member", 200},
		{"unknown token", "Bearer forged", 401},
		{"other site's token", "Bearer foreign", 401},
		{"basic", "Basic Zm9vOmJhcg==", 401},
	} {
		var hdr []string
		if c.authz != "" {
			hdr = []string{"Authorization", c.authz}
		}
		resp, body := post(t, srv, "", list, hdr...)
		if resp.StatusCode != c.want {
			t.Errorf("%s: %d %s; want %d", c.name, resp.StatusCode, body, c.want)
		}
		if c.want == 401 && !strings.Contains(resp.Header.Get("WWW-Authenticate"), "resource_metadata=") {
			t.Errorf("%s: WWW-Authenticate %q", c.name, resp.Header.Get("WWW-Authenticate"))
		}
	}
}

func TestMCPOriginAllowed(t *testing.T) {
	for _, c := range []struct {
		values []string
		want   bool
	}{
		{nil, true},
		{[]string{"https://school.example"}, true},
		{[]string{"https://SCHOOL.example:443"}, true},
		{[]string{"https://www.school.example"}, true},
		{[]string{"http://school.example"}, false},
		{[]string{"https://school.example/"}, false},
		{[]string{"https://school.example.evil.test"}, false},
		{[]string{"https://other.example"}, false},
		{[]string{"null"}, false},
		{[]string{""}, false},
		{[]string{"https://school.example", "https://school.example"}, false},
	} {
		if got := originAllowed(testSite, c.values); got != c.want {
			t.Errorf("originAllowed(%q) = %v; want %v", c.values, got, c.want)
		}
	}
}

// Member tools answer with the caller's own rows; bounds hold.
func TestMCPToolAnswers(t *testing.T) {
	f := newFake()
	srv := testServer(t, newTestHandler(f))
	anon := connect(t, srv, "")

	var search SearchCoursesOutput
	call(t, anon, "search_courses", map[string]any{"limit": 50}, &search)
	if len(search.Courses) != 50 || search.Total != 60 || search.NextCursor != "50" {
		t.Errorf("a page of 50: %d courses, total %d, next %q", len(search.Courses), search.Total, search.NextCursor)
	}
	var last SearchCoursesOutput
	call(t, anon, "search_courses", map[string]any{"limit": 50, "cursor": search.NextCursor}, &last)
	if len(last.Courses) != 10 || last.NextCursor != "" {
		t.Errorf("the last page: %d courses, next %q", len(last.Courses), last.NextCursor)
	}
	for _, c := range append(search.Courses, last.Courses...) {
		if c.Slug == "secret-draft" || c.Slug == "elsewhere" {
			t.Errorf("search_courses shows %s", c.Slug)
		}
	}
	for _, args := range []map[string]any{{"limit": 0}, {"limit": 51}, {"cursor": "abc"}, {"query": strings.Repeat("x", 201)}, {"unknown": 1}} {
		if res := call(t, anon, "search_courses", args, nil); !res.IsError {
			t.Errorf("search_courses(%v) accepted", args)
		}
	}
	if res := call(t, anon, "get_course", map[string]any{"slug": "Not A Slug"}, nil); !res.IsError {
		t.Error("get_course with a malformed slug accepted")
	}

	member := connect(t, srv, "writer")
	var notes MyNotificationsOutput
	call(t, member, "my_notifications", nil, &notes)
	if notes.Total != 1 || notes.Notifications[0].Title != "Hello" || notes.UnreadCount != 1 {
		t.Errorf("my_notifications: %+v", notes)
	}
	if res := call(t, member, "mark_notification_read", map[string]any{"id": 8}, nil); !res.IsError {
		t.Error("marked another member's notification")
	}
	// An id beyond what a JSON number holds exactly is the schema's refusal,
	// not a decoder's overflow in Go's words.
	for _, id := range []any{int64(9223372036854775807), 0, -1} {
		res := call(t, member, "mark_notification_read", map[string]any{"id": id}, nil)
		text := ""
		if len(res.Content) > 0 {
			if tc, ok := res.Content[0].(*gomcp.TextContent); ok {
				text = tc.Text
			}
		}
		if !res.IsError || strings.Contains(text, "Go struct") || strings.Contains(text, "int64") {
			t.Errorf("mark_notification_read(%v): %v %q", id, res.IsError, text)
		}
	}
	var marked MarkNotificationReadOutput
	call(t, member, "mark_notification_read", map[string]any{"id": 7}, &marked)
	if !marked.Notification.Read || marked.UnreadCount != 0 {
		t.Errorf("mark_notification_read: %+v", marked)
	}
	var info SiteInfoOutput
	call(t, member, "get_site_info", nil, &info)
	if !info.Access.SignedIn || !slices.Equal(info.Access.Scopes, []string{"account:read", "account:write"}) || len(info.Access.Tools) != 10 {
		t.Errorf("get_site_info access: %+v", info.Access)
	}

	var courses ListCoursesOutput
	call(t, connect(t, srv, "operator"), "list_courses", map[string]any{"limit": 50, "cursor": "50"}, &courses)
	if courses.Total != 61 || len(courses.Courses) != 11 || courses.Courses[10].Slug != "secret-draft" {
		t.Errorf("list_courses with drafts: total %d, %d on the page", courses.Total, len(courses.Courses))
	}
}

// A failing database is a tool error without internals, and a 503 when
// even the caller cannot be established.
func TestMCPStorageDown(t *testing.T) {
	f := newFake()
	srv := testServer(t, newTestHandler(f))
	anon := connect(t, srv, "")
	f.down = true
	res := call(t, anon, "search_courses", nil, nil)
	raw, _ := json.Marshal(res)
	if !res.IsError || strings.Contains(string(raw), "secret detail") || !strings.Contains(string(raw), "temporarily unavailable") {
		t.Errorf("search_courses with the database down: %s", raw)
	}
	resp, body := post(t, srv, "member", callBody("my_enrollments"))
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || strings.Contains(body, "secret detail") {
		t.Errorf("a token request with the database down: %d %s", resp.StatusCode, body)
	}
}

// Every tool has a description, bounded input and structured output.
func TestMCPToolSchemas(t *testing.T) {
	want := sorted(publicTools, memberRead, operatorTools, []string{"mark_notification_read"})
	var names []string
	cs := connectServer(t, newTestHandler(newFake()).build(testSite, ^toolMask(0)))
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if len(tool.Description) < 80 || tool.Title == "" {
			t.Errorf("%s: description %q", tool.Name, tool.Description)
		}
		in := schemaOf(t, tool.InputSchema)
		out := schemaOf(t, tool.OutputSchema)
		if in.Type != "object" || out == nil || out.Type != "object" {
			t.Errorf("%s: input %v, output %v", tool.Name, in.Type, out)
		}
		if lim, ok := in.Properties["limit"]; ok {
			if lim.Maximum == nil || *lim.Maximum != MaxPageSize || lim.Minimum == nil || *lim.Minimum != 1 {
				t.Errorf("%s: limit is not bounded to 1..%d", tool.Name, MaxPageSize)
			}
		}
		for name, p := range in.Properties {
			if p.Type == "string" && p.MaxLength == nil && p.Enum == nil {
				t.Errorf("%s: string input %s has no maxLength", tool.Name, name)
			}
		}
		for name, p := range out.Properties {
			if slices.Contains(p.Types, "array") {
				t.Errorf("%s: output list %s may be null", tool.Name, name)
			}
		}
	}
	if !slices.Equal(names, want) {
		t.Errorf("tools %v; want %v", names, want)
	}
}

func schemaOf(t testing.TB, v any) *jsonschema.Schema {
	t.Helper()
	if v == nil {
		return nil
	}
	b, _ := json.Marshal(v)
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

// connectServer connects a client to s in memory.
func connectServer(t testing.TB, s *gomcp.Server) *gomcp.ClientSession {
	t.Helper()
	ct, st := gomcp.NewInMemoryTransports()
	ctx := tenant.WithSite(context.Background(), testSite)
	if _, err := s.Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := gomcp.NewClient(&gomcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// Servers are built once per site, site version and tool set.
func TestMCPServerCache(t *testing.T) {
	h := newTestHandler(newFake())
	builds := 0
	build := func(s *tenant.Site, m toolMask) *gomcp.Server { builds++; return h.build(s, m) }
	a := h.servers.get(testSite, publicMask, build)
	if b := h.servers.get(testSite, publicMask, build); a != b || builds != 1 {
		t.Fatalf("the same key built %d servers", builds)
	}
	if h.servers.get(otherSite, publicMask, build) == a || h.servers.get(testSite, maskFor([]string{"account:read"}), build) == a {
		t.Fatal("different sites or tool sets share a server")
	}
	changed := *testSite
	changed.UpdatedAt = changed.UpdatedAt.Add(time.Second)
	if h.servers.get(&changed, publicMask, build) == a {
		t.Fatal("a changed site kept its old server")
	}
	small := newServerCache(8)
	for i := range 100 {
		s := *testSite
		s.ID = tenant.ID(i)
		small.get(&s, publicMask, h.build)
		if small.len() > 8 {
			t.Fatalf("cache of 8 holds %d", small.len())
		}
	}
}

// GET without an event stream describes the endpoint; the SDK answers the rest.
func TestMCPGetInfo(t *testing.T) {
	srv := testServer(t, newTestHandler(newFake()))
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), "Test School") || !strings.Contains(string(b), "`sales_summary` | `analytics:read`") {
		t.Errorf("GET: %d %s", resp.StatusCode, b)
	}
	req, _ := http.NewRequest(http.MethodDelete, srv.URL, nil)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("DELETE: %d", resp.StatusCode)
	}
}

// The SDK refuses bad requests in plain text; /mcp answers them in JSON:
// payload errors as JSON-RPC errors without an id, HTTP-level ones in the
// RFC 6749 style of every other endpoint. A good request still works after
// each of them (nothing is left half-written).
func TestMCPBadInputIsJSON(t *testing.T) {
	srv := testServer(t, newTestHandler(newFake()))
	type rpcErr struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	tests := []struct {
		name    string
		method  string
		body    string
		hdr     []string
		status  int
		rpcCode int    // a JSON-RPC error with this code, or
		oauth   string // an RFC 6749-style error with this code
		mention string
	}{
		{name: "not JSON", method: "POST", body: "not json", status: 400, rpcCode: rpcParseError, mention: "not JSON"},
		{name: "truncated JSON", method: "POST", body: `{"jsonrpc":"2.0","id":1,"method":"tools/li`, status: 400, rpcCode: rpcParseError},
		{name: "empty body", method: "POST", body: "", status: 400, rpcCode: rpcParseError},
		{name: "no jsonrpc version", method: "POST", body: `{"id":1,"method":"tools/list"}`, status: 400, rpcCode: rpcInvalidRequest, mention: "2.0"},
		{name: "empty batch", method: "POST", body: `[]`, status: 400, rpcCode: rpcInvalidRequest, mention: "batch"},
		{name: "a number", method: "POST", body: `123`, status: 400, rpcCode: rpcInvalidRequest},
		{name: "Accept without event-stream", method: "POST", body: callBody("get_site_info"), hdr: []string{"Accept", "application/json"},
			status: 400, rpcCode: rpcInvalidRequest, mention: "Accept"},
		{name: "text/plain", method: "POST", body: callBody("get_site_info"), hdr: []string{"Content-Type", "text/plain"},
			status: 415, oauth: "unsupported_media_type", mention: "application/json"},
		{name: "DELETE", method: "DELETE", status: 405, oauth: "method_not_allowed"},
		{name: "GET for an event stream", method: "GET", hdr: []string{"Accept", "text/event-stream"}, status: 405, oauth: "method_not_allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, srv.URL, strings.NewReader(tt.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
			for i := 0; i+1 < len(tt.hdr); i += 2 {
				req.Header.Set(tt.hdr[i], tt.hdr[i+1])
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status || resp.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("%d %q %s; want %d application/json", resp.StatusCode, resp.Header.Get("Content-Type"), b, tt.status)
			}
			if tt.rpcCode != 0 {
				var e rpcErr
				if err := json.Unmarshal(b, &e); err != nil || e.JSONRPC != "2.0" || string(e.ID) != "null" || e.Error.Code != tt.rpcCode ||
					!strings.Contains(e.Error.Message, tt.mention) {
					t.Fatalf("body %s; want a JSON-RPC error %d without id mentioning %q", b, tt.rpcCode, tt.mention)
				}
				return
			}
			var e struct {
				Error string `json:"error"`
			}
			if err := json.Unmarshal(b, &e); err != nil || e.Error != tt.oauth || !strings.Contains(string(b), tt.mention) {
				t.Fatalf("body %s; want error %q mentioning %q", b, tt.oauth, tt.mention)
			}
		})
	}
	if resp, body := post(t, srv, "", callBody("get_site_info")); resp.StatusCode != 200 || !strings.Contains(body, "Test School") {
		t.Fatalf("a good call after the bad ones: %d %s", resp.StatusCode, body)
	}
}
