package memberapi

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lectern/lectern/authserver/bearer"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// fakeStore keeps one site's member data in memory. It implements Store
// with the same semantics as sqlstore (keyset pages, user and site
// scoping), counts calls per method, and can fail a method on demand.
type fakeStore struct {
	mu    sync.Mutex
	calls map[string]int
	fail  map[string]error // method → error to return
	panic map[string]bool

	users         map[string]*storage.User
	sites         map[string][]storage.UserSiteRoles
	enrollments   []storage.EnrollmentView
	enrollUser    map[int64]string // enrollment ID → user
	progress      []storage.LectureProgress
	products      []storage.ProductPurchaseView
	notifications []storage.Notification
	subs          []storage.NotificationSubscription
}

func newFakeStore() *fakeStore {
	return &fakeStore{
		calls: map[string]int{}, fail: map[string]error{}, panic: map[string]bool{},
		users: map[string]*storage.User{}, sites: map[string][]storage.UserSiteRoles{}, enrollUser: map[int64]string{},
	}
}

func (f *fakeStore) call(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[name]++
	if f.panic[name] {
		panic("fake store: " + name + " exploded with secret detail")
	}
	return f.fail[name]
}

func (f *fakeStore) count(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[name]
}

func (f *fakeStore) resetCounts() {
	f.mu.Lock()
	defer f.mu.Unlock()
	clear(f.calls)
}

func limitOf(p storage.Page) int {
	if p.Limit <= 0 {
		return 20
	}
	return p.Limit
}

func (f *fakeStore) UserByID(ctx context.Context, id string) (*storage.User, error) {
	if err := f.call("UserByID"); err != nil {
		return nil, err
	}
	u, ok := f.users[id]
	if !ok {
		return nil, storage.ErrNotFound
	}
	return u, nil
}

func (f *fakeStore) SitesOfUser(ctx context.Context, userID string) ([]storage.UserSiteRoles, error) {
	if err := f.call("SitesOfUser"); err != nil {
		return nil, err
	}
	return f.sites[userID], nil
}

func (f *fakeStore) RolesAt(ctx context.Context, site tenant.ID, userID string) ([]string, error) {
	if err := f.call("RolesAt"); err != nil {
		return nil, err
	}
	for _, s := range f.sites[userID] {
		if s.SiteID == site {
			return s.Roles, nil
		}
	}
	return nil, nil
}

func (f *fakeStore) ListEnrollments(ctx context.Context, site tenant.ID, userID string, p storage.Page) ([]storage.EnrollmentView, int, error) {
	if err := f.call("ListEnrollments"); err != nil {
		return nil, 0, err
	}
	var out []storage.EnrollmentView
	total := 0
	for _, e := range f.enrollments {
		if f.enrollUser[e.ID] != userID || site != testSiteID {
			continue
		}
		total++
		if e.ID > p.After && len(out) < limitOf(p) {
			out = append(out, e)
		}
	}
	return out, total, nil
}

// CourseProgress is part of storage.MemberStore; the Member API does not
// call it (the schema has lastWatchedLecture only).
func (f *fakeStore) CourseProgress(context.Context, tenant.ID, string, int64) ([]storage.LectureProgress, error) {
	return nil, f.call("CourseProgress")
}

func (f *fakeStore) LastWatched(ctx context.Context, site tenant.ID, userID string, courseIDs []int64) (map[int64]storage.LectureProgress, error) {
	if err := f.call("LastWatched"); err != nil {
		return nil, err
	}
	out := map[int64]storage.LectureProgress{}
	for _, p := range f.progress {
		if p.UserID != userID || p.SiteID != site || !slices.Contains(courseIDs, p.CourseID) {
			continue
		}
		if cur, ok := out[p.CourseID]; !ok || p.UpdatedAt.After(cur.UpdatedAt) {
			out[p.CourseID] = p
		}
	}
	return out, nil
}

func (f *fakeStore) ListProductPurchases(ctx context.Context, site tenant.ID, userID string, p storage.Page) ([]storage.ProductPurchaseView, int, error) {
	if err := f.call("ListProductPurchases"); err != nil {
		return nil, 0, err
	}
	var out []storage.ProductPurchaseView
	for _, v := range f.products {
		if v.ID > p.After && len(out) < limitOf(p) {
			out = append(out, v)
		}
	}
	return out, len(f.products), nil
}

func (f *fakeStore) ListConsultingPurchases(ctx context.Context, site tenant.ID, userID string, p storage.Page) ([]storage.ConsultingPurchaseView, int, error) {
	if err := f.call("ListConsultingPurchases"); err != nil {
		return nil, 0, err
	}
	return nil, 0, nil
}

func (f *fakeStore) ListEventRegistrations(ctx context.Context, site tenant.ID, userID string, p storage.Page) ([]storage.EventRegistrationView, int, error) {
	if err := f.call("ListEventRegistrations"); err != nil {
		return nil, 0, err
	}
	return nil, 0, nil
}

func (f *fakeStore) ListNotifications(ctx context.Context, site tenant.ID, userID string, p storage.Page, unreadOnly bool) ([]storage.Notification, int, error) {
	if err := f.call("ListNotifications"); err != nil {
		return nil, 0, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var mine []storage.Notification
	for _, n := range f.notifications {
		if n.SiteID == site && n.UserID == userID && (!unreadOnly || n.ReadAt == nil) {
			mine = append(mine, n)
		}
	}
	sort.Slice(mine, func(i, j int) bool { return mine[i].ID > mine[j].ID })
	var out []storage.Notification
	for _, n := range mine {
		if (p.After == 0 || n.ID < p.After) && len(out) < limitOf(p) {
			out = append(out, n)
		}
	}
	return out, len(mine), nil
}

func (f *fakeStore) UnreadNotificationCount(ctx context.Context, site tenant.ID, userID string) (int, error) {
	if err := f.call("UnreadNotificationCount"); err != nil {
		return 0, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, v := range f.notifications {
		if v.SiteID == site && v.UserID == userID && v.ReadAt == nil {
			n++
		}
	}
	return n, nil
}

func (f *fakeStore) MarkNotificationRead(ctx context.Context, site tenant.ID, userID string, id int64, at time.Time) (*storage.Notification, error) {
	if err := f.call("MarkNotificationRead"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.notifications {
		n := &f.notifications[i]
		if n.ID == id && n.SiteID == site && n.UserID == userID {
			if n.ReadAt == nil {
				n.ReadAt = &at
			}
			c := *n
			return &c, nil
		}
	}
	return nil, storage.ErrNotFound
}

func (f *fakeStore) MarkAllNotificationsRead(ctx context.Context, site tenant.ID, userID string, at time.Time) (int, error) {
	if err := f.call("MarkAllNotificationsRead"); err != nil {
		return 0, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for i := range f.notifications {
		v := &f.notifications[i]
		if v.SiteID == site && v.UserID == userID && v.ReadAt == nil {
			v.ReadAt = &at
			n++
		}
	}
	return n, nil
}

func (f *fakeStore) ListNotificationSubscriptions(ctx context.Context, site tenant.ID, userID string, p storage.SubscriptionPage) ([]storage.NotificationSubscription, int, error) {
	if err := f.call("ListNotificationSubscriptions"); err != nil {
		return nil, 0, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var mine []storage.NotificationSubscription
	for _, s := range f.subs {
		if s.SiteID == site && s.UserID == userID {
			mine = append(mine, s)
		}
	}
	slices.SortFunc(mine, func(a, b storage.NotificationSubscription) int {
		return cmp.Or(strings.Compare(a.Topic, b.Topic), strings.Compare(a.Channel, b.Channel))
	})
	var out []storage.NotificationSubscription
	for _, s := range mine {
		if p.AfterTopic != "" && (s.Topic < p.AfterTopic || s.Topic == p.AfterTopic && s.Channel <= p.AfterChannel) {
			continue
		}
		if len(out) == p.Limit {
			break
		}
		out = append(out, s)
	}
	return out, len(mine), nil
}

func (f *fakeStore) NotificationSubscription(ctx context.Context, site tenant.ID, userID, topic, channel string) (*storage.NotificationSubscription, error) {
	if err := f.call("NotificationSubscription"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.subs {
		if s.SiteID == site && s.UserID == userID && s.Topic == topic && s.Channel == channel {
			return &s, nil
		}
	}
	return nil, storage.ErrNotFound
}

func (f *fakeStore) SetNotificationSubscription(ctx context.Context, sub *storage.NotificationSubscription) error {
	if err := f.call("SetNotificationSubscription"); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.subs {
		s := &f.subs[i]
		if s.SiteID == sub.SiteID && s.UserID == sub.UserID && s.Topic == sub.Topic && s.Channel == sub.Channel {
			s.Enabled = sub.Enabled
			return nil
		}
	}
	f.subs = append(f.subs, *sub)
	return nil
}

const (
	testSiteID  tenant.ID = 7
	testUser              = "usr_member"
	otherUser             = "usr_other"
	testOrigin            = "https://academy.example"
	testOrigin2           = "https://other.example"
)

var testSite = &tenant.Site{ID: testSiteID, Slug: "academy", Name: "Academy", Origin: testOrigin}

// fakeAuth answers with the token named by the Authorization header:
// "Bearer <scope>+<scope>..." is the test user's token with those scopes;
// no header is bearer's no-token error; "Bearer bad" is invalid.
type fakeAuth struct{}

func (fakeAuth) Authenticate(r *http.Request) (*bearer.Token, error) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return nil, bearer.InvalidToken("no bearer token")
	}
	raw, ok := strings.CutPrefix(h, "Bearer ")
	if !ok || raw == "bad" {
		return nil, bearer.InvalidToken("the access token is invalid")
	}
	user := testUser
	if u, rest, ok := strings.Cut(raw, "@"); ok {
		user, raw = u, rest
	}
	return &bearer.Token{Site: testSiteID, Subject: user, Scopes: strings.Split(raw, "+"), Audience: testOrigin}, nil
}

// siteAuth answers every request with a token of user at site, with the
// scopes of "Bearer <scope>+<scope>...".
type siteAuth struct {
	site tenant.ID
	user string
}

func (a siteAuth) Authenticate(r *http.Request) (*bearer.Token, error) {
	raw, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return nil, bearer.InvalidToken("no bearer token")
	}
	return &bearer.Token{Site: a.site, Subject: a.user, Scopes: strings.Split(raw, "+")}, nil
}

// withSite puts site in every request's context, as the tenant middleware
// does.
func withSite(h http.Handler, site *tenant.Site) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(tenant.WithSite(r.Context(), site)))
	})
}

const (
	readWrite = "account:read+account:write"
	readOnly  = "openid+account:read"
	writeOnly = "account:write"
	operator  = "openid+courses:read+students:read"
)

// seededFake is the fake store with a member like the demo student.
func seededFake() *fakeStore {
	f := newFakeStore()
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	f.users[testUser] = &storage.User{ID: testUser, Email: "member@example.test", Name: "Mem Ber"}
	f.users[otherUser] = &storage.User{ID: otherUser, Email: "other@example.test", Name: "Other"}
	f.sites[testUser] = []storage.UserSiteRoles{
		{SiteID: testSiteID, Slug: "academy", Name: "Academy", Origin: testOrigin, Roles: []string{"student"}},
		{SiteID: 9, Slug: "other", Name: "Other", Origin: testOrigin2, Roles: []string{"admin", "student"}},
	}
	exp := now.Add(24 * time.Hour)
	f.enrollments = []storage.EnrollmentView{
		{ID: 1, CourseID: 11, CourseSlug: "one", CourseTitle: "One", EnrolledAt: now},
		{ID: 2, CourseID: 12, CourseSlug: "two", CourseTitle: "Two", EnrolledAt: now, ExpiresAt: &exp},
	}
	f.enrollUser[1], f.enrollUser[2] = testUser, testUser
	f.progress = []storage.LectureProgress{
		{SiteID: testSiteID, UserID: testUser, CourseID: 11, LectureID: 101, PositionSeconds: 30, UpdatedAt: now},
	}
	f.products = []storage.ProductPurchaseView{{ID: 5, Slug: "sheet", Title: "Sheet", PurchasedAt: now}}
	read := now
	f.notifications = []storage.Notification{
		{ID: 21, SiteID: testSiteID, UserID: testUser, Kind: "k", Title: "first", CreatedAt: now, ReadAt: &read},
		{ID: 22, SiteID: testSiteID, UserID: testUser, Kind: "k", Title: "second", CreatedAt: now},
		{ID: 23, SiteID: testSiteID, UserID: otherUser, Kind: "k", Title: "other member's secret", CreatedAt: now},
		{ID: 24, SiteID: 9, UserID: testUser, Kind: "k", Title: "other site's", CreatedAt: now},
	}
	f.subs = []storage.NotificationSubscription{
		{SiteID: testSiteID, UserID: testUser, Topic: "course_updates", Channel: "email", Enabled: true},
		{SiteID: testSiteID, UserID: testUser, Topic: "legacy_digest", Channel: "sms", Enabled: true},
	}
	return f
}

// testAPI is a Handler on a fake store, with the site in every request's
// context (as the tenant middleware puts it) and logs kept.
type testAPI struct {
	t     *testing.T
	h     http.Handler
	store *fakeStore
	logs  *bytes.Buffer
	logMu *sync.Mutex
}

func newTestAPI(t *testing.T, store *fakeStore, limits *Limits) *testAPI {
	t.Helper()
	api := &testAPI{t: t, store: store, logs: &bytes.Buffer{}, logMu: &sync.Mutex{}}
	logger := slog.New(slog.NewTextHandler(lockedWriter{api.logMu, api.logs}, nil))
	h, err := New(Options{Store: store, Verifier: fakeAuth{}, Logger: logger, Limits: limits,
		Now: func() time.Time { return time.Date(2026, 5, 2, 0, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	api.h = withSite(h, testSite)
	return api
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (a *testAPI) logText() string {
	a.logMu.Lock()
	defer a.logMu.Unlock()
	return a.logs.String()
}

// gqlResult is a decoded response.
type gqlResult struct {
	status int
	header http.Header
	raw    string
	Data   map[string]any `json:"data"`
	Errors []struct {
		Message    string         `json:"message"`
		Path       []any          `json:"path"`
		Extensions map[string]any `json:"extensions"`
	} `json:"errors"`
}

func (r *gqlResult) codes() []string {
	var out []string
	for _, e := range r.Errors {
		c, _ := e.Extensions["code"].(string)
		out = append(out, c)
	}
	return out
}

func (a *testAPI) do(req *http.Request) *gqlResult {
	a.t.Helper()
	rec := httptest.NewRecorder()
	a.h.ServeHTTP(rec, req)
	res := &gqlResult{status: rec.Code, header: rec.Header(), raw: rec.Body.String()}
	if strings.HasPrefix(rec.Header().Get("Content-Type"), "application/") && rec.Body.Len() > 0 {
		if err := json.Unmarshal(rec.Body.Bytes(), res); err != nil {
			a.t.Fatalf("response is not JSON: %v\n%s", err, rec.Body.String())
		}
	}
	return res
}

// post sends a GraphQL request with the token "Bearer <token>".
func (a *testAPI) post(token, query string, vars map[string]any, opName ...string) *gqlResult {
	a.t.Helper()
	body := map[string]any{"query": query}
	if vars != nil {
		body["variables"] = vars
	}
	if len(opName) > 0 {
		body["operationName"] = opName[0]
	}
	b, _ := json.Marshal(body)
	return a.do(a.request(token, "application/json", b))
}

func (a *testAPI) request(token, contentType string, body []byte) *http.Request {
	req := httptest.NewRequest(http.MethodPost, testOrigin+"/member/graphql", bytes.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return req
}

// path walks a decoded JSON value: keys for objects, ints for arrays.
func path(v any, keys ...any) any {
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}
