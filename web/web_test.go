package web

import (
	"context"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lectern/lectern/authserver/clientmeta"
	"github.com/lectern/lectern/session"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/storage/cache"
	"github.com/lectern/lectern/tenant"
	"github.com/lectern/lectern/ui"
)

var testNow = time.Date(2026, 3, 3, 14, 5, 0, 0, time.UTC)

// testHandler is a Handler that can render and keep flash messages, with
// no store behind it.
func testHandler(t *testing.T) *Handler {
	t.Helper()
	pages, err := pageFS()
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(t.Output(), nil))
	r, err := ui.NewRenderer(logger, pages)
	if err != nil {
		t.Fatal(err)
	}
	return &Handler{ui: r, logger: logger, now: func() time.Time { return testNow }, cache: cache.NewMemory(nil)}
}

func testRequest(roles ...string) *request {
	return &request{
		site:   &tenant.Site{ID: 7, Name: "Demo <Academy>", Origin: "https://academy.example"},
		stored: &storage.Site{ID: 7, MCPConnectionsBeta: true},
		sess:   &session.Session{SiteID: 7, UserID: "usr_a", CSRF: "csrf-token-of-the-session"},
		user:   &storage.User{ID: "usr_a", Email: "owner@example.test"},
		roles:  roles,
	}
}

// Every page template renders with representative data: a field renamed in
// Go but not in a template (or the reverse) fails here, not in front of a
// person.
func TestEveryPageRenders(t *testing.T) {
	h := testHandler(t)
	rq := testRequest(storage.RoleOwner)
	admin := chromeFor(rq, "admin", "apps")
	ago := h.when(testNow.Add(-3 * time.Hour))
	choices := scopeChoices(storage.AudienceMember, newAppScopes)
	errs := fieldErrors{Name: "Name: is required", RedirectURIs: "bad uri", Scopes: `unknown scope "x"`, Type: "choose", Form: "form"}
	app := appView{Name: "Study Buddy", ClientID: "lct_x", Type: "confidential", Audience: "member", Confidential: true,
		RedirectURIs: []string{"http://127.0.0.1/cb"}, Scopes: describeScopes(newAppScopes), Created: ago, LastUsed: when{Text: "time.not_yet"},
		URL: appURL("lct_x"), RotateURL: "/r", DeleteURL: "/d", ConnectionsURL: "/c"}
	samples := map[string]struct {
		data any
		want []string
	}{
		"admin_dashboard": {dashboardData{chrome: admin, Role: "owner", Manager: true, BetaOn: true, Applications: 2,
			Recent: []auditRow{{When: ago, Actor: "a@b", Action: "client.created", Target: "lct_x"}}}, []string{"2 applications", "client.created"}},
		"admin_settings": {settingsData{chrome: admin, BetaOn: false}, []string{"Turn on MCP connections", `name="enabled" value="on"`}},
		"admin_apps": {appListData{chrome: admin, Apps: []appRow{{Name: "Study Buddy", ClientID: "lct_x", URL: "/a", Scopes: describeScopes([]string{"openid"}), Created: ago}},
			Pager: pager{Page: 1, Pages: 2, From: 1, To: 20, Total: 21, NextURL: "/admin/developers/apps?page=2"}}, []string{"lct_x", "Showing 1–20 of 21", "3 hours ago"}},
		"admin_app_new": {appFormData{chrome: admin, Form: appForm{Name: "N", Type: "confidential"}, Choices: choices, Errors: errs},
			[]string{`id="app-redirects-error"`, "bad uri", `unknown scope &#34;x&#34;`, `id="type-confidential" name="type" value="confidential" checked`}},
		"admin_app": {appData{appFormData: appFormData{chrome: admin, Choices: choices}, App: app, Secret: "lcs_secret"},
			[]string{`<code id="client-secret" class="credential">lcs_secret</code>`, "Rotate secret…", "/static/copy.js"}},
		"admin_connections": {grantListData{chrome: admin, Rows: []grantRow{{ClientName: "Study Buddy", Member: "s@x", Scopes: []string{"openid"}, Created: ago, LastUsed: ago, RevokeURL: "/rv"}}},
			[]string{"s@x", `href="/rv"`}},
		"admin_audit": {auditData{chrome: admin, Rows: []auditRow{{When: ago, Action: "grant.revoked"}}, OlderURL: "/admin/audit?before=5", NewestURL: "/admin/audit"},
			[]string{"Older events", "Newest events"}},
		"account_connections": {connectionsData{chrome: chromeFor(rq, "account", "account"), Apps: []connectedApp{{Name: "Study Buddy", ClientID: "lct_x", Host: "127.0.0.1",
			Scopes: describeScopes([]string{"account:read"}), Since: ago, LastUsed: ago, RevokeURL: "/account/connections/revoke?client_id=lct_x"}}},
			[]string{"View your enrollments, progress, purchases and notifications", `data-client-id="lct_x"`}},
		"account": {accountData{chrome: chromeFor(rq, "account", "profile"), Name: "Ada", Email: "owner@example.test",
			PictureURL: "https://academy.example/avatars/usr_a/k.png", Uploaded: true, MaxMiB: 2, Accept: "image/png,image/jpeg,image/webp"},
			[]string{`src="https://academy.example/avatars/usr_a/k.png"`, `enctype="multipart/form-data"`, `name="picture" accept="image/png,image/jpeg,image/webp"`,
				`id="picture-remove-form"`, `href="/account" aria-current="page"`}},
		"web_confirm": {confirmData{chrome: admin, Message: "Delete it?", Details: []string{"d"}, List: []string{"l"}, After: []string{"a"},
			Facts: []fact{{"Client ID", "lct_x"}}, Action: "/x", Hidden: []hiddenField{{"client_id", "lct_x"}}, Button: "Delete", Danger: true, CancelURL: "/c"},
			[]string{`name="confirm" value="yes"`, `name="client_id" value="lct_x"`, `class="danger"`}},
		"web_problem": {problemData{chrome: admin, Message: "Nope", Links: []link{{"Home", "/admin"}}}, []string{"Nope"}},
		"admin_members": {membersData{chrome: admin, Members: []memberRow{{Name: "Sam", Email: "s@x", Roles: []string{"student"}, Since: ago}},
			Invitations: []invitationRow{{ID: 3, Email: "new@x", Role: "lecturer", Sent: ago, Expires: ago, ResendURL: "/admin/members/invitations/3/resend", Revoke: "/admin/members/invitations/3/revoke", Manage: true},
				{ID: 4, Email: "boss@x", Role: "owner", Sent: ago, Expires: ago, ResendURL: "/admin/members/invitations/4/resend", Revoke: "/admin/members/invitations/4/revoke"}},
			Form: inviteForm{Role: "student", Error: "Enter an e-mail address."}, Roles: []string{"student", "owner"}},
			[]string{`action="/admin/members/invitations/3/resend"`, `href="/admin/members/invitations/3/revoke"`, "new@x", "Enter an e-mail address.", `<option value="student" selected>`,
				"boss@x", "Only an owner can resend or revoke an invitation to be an owner."}},
		"account_email": {emailData{chrome: chromeFor(rq, "account", "email"), Email: "owner@example.test", Verified: true, Error: "Your current password is wrong."},
			[]string{`id="current-email">owner@example.test`, "verified", "Your current password is wrong.", `name="new_email"`}},
		"account_security": {securityData{chrome: chromeFor(rq, "account", "security"), Required: true, Continue: "/admin", PasskeysAvailable: true,
			Passkeys: []passkeyRow{{ID: 4, Name: "Work laptop", Created: ago}}, TOTP: true, RecoveryLeft: 9, SessionsMax: 50,
			Sessions: []sessionRow{{Handle: "h1", Device: "Firefox on Linux", Place: "This network (10.1.2.0/24)", LastSeen: ago, Current: true, Factors: "password + passkey"}}},
			[]string{`id="factor-required"`, `href="/admin" id="continue-link"`, `action="/account/security/passkeys/4/rename"`, "Work laptop",
				`data-passkey="register"`, `id="recovery-left">9<`, `action="/account/security/sessions/h1/end"`, "This browser", "Firefox on Linux",
				`id="end-all-form"`, `href="/account/security" aria-current="page"`}},
		"account_totp": {totpEnrolData{chrome: chromeFor(rq, "account", "security"), Secret: "JBSWY3DPEHPK3PXP", Error: "That code is not right."},
			[]string{`id="totp-secret">JBSWY3DPEHPK3PXP`, `src="/account/security/totp/qr.png"`, "That code is not right.", `action="/account/security/totp/confirm"`}},
		"account_recovery": {recoveryData{chrome: chromeFor(rq, "account", "security"), Codes: []string{"abcde-fghij"}},
			[]string{"<code>abcde-fghij</code>", "shown only this once"}},
	}
	names, err := fs.Glob(mustPageFS(t), "templates/*.html")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		name := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
		s, ok := samples[name]
		if !ok {
			t.Errorf("page %s has no sample in this test", name)
			continue
		}
		w := httptest.NewRecorder()
		h.render(w, httptest.NewRequest(http.MethodGet, "/admin", nil), rq, http.StatusOK, name, "Title", s.data, &flash{Kind: "ok", Message: "Saved."})
		body := w.Body.String()
		if w.Code != http.StatusOK {
			t.Errorf("%s: status %d: %s", name, w.Code, body)
			continue
		}
		want := append([]string{
			"Demo &lt;Academy&gt;", "Saved.", `value="csrf-token-of-the-session"`, // header, flash, sign-out form
			`id="nav-developers"`, "owner@example.test",
		}, s.want...)
		if strings.HasPrefix(name, "account_") || name == "account" {
			want = slices.DeleteFunc(want, func(s string) bool { return s == `id="nav-developers"` })
		}
		for _, wnt := range want {
			if !strings.Contains(body, wnt) {
				t.Errorf("%s lacks %q", name, wnt)
			}
		}
	}
}

func mustPageFS(t *testing.T) fs.FS {
	t.Helper()
	f, err := pageFS()
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// The navigation shows each person what they may open, and no more.
func TestNavigationByRole(t *testing.T) {
	h := testHandler(t)
	cases := []struct {
		name   string
		roles  []string
		betaOn bool
		want   []string
		absent []string
	}{
		{"owner, beta on", []string{"owner"}, true, []string{"/admin/settings", "nav-developers", "/admin/audit"}, nil},
		{"owner, beta off", []string{"owner"}, false, []string{"/admin/settings", "/admin/audit"}, []string{"nav-developers"}},
		{"admin", []string{"admin"}, true, []string{"/admin/settings", "nav-developers"}, nil},
		{"lecturer", []string{"lecturer"}, true, []string{`href="/admin"`}, []string{"/admin/settings", "nav-developers", "/admin/audit"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rq := testRequest(c.roles...)
			rq.stored.MCPConnectionsBeta = c.betaOn
			w := httptest.NewRecorder()
			h.render(w, httptest.NewRequest(http.MethodGet, "/admin", nil), rq, http.StatusOK, "web_problem", "T", problemData{chrome: chromeFor(rq, "admin", "")}, nil)
			for _, s := range c.want {
				if !strings.Contains(w.Body.String(), s) {
					t.Errorf("menu lacks %s", s)
				}
			}
			for _, s := range c.absent {
				if strings.Contains(w.Body.String(), s) {
					t.Errorf("menu has %s", s)
				}
			}
		})
	}
}

func TestPaginate(t *testing.T) {
	q := url.Values{"client": {"a b"}, "page": {"2"}}
	cases := []struct {
		total              int
		page               string
		from, to           int
		wantPrev, wantNext string
		pages              int
	}{
		{0, "", 0, 0, "", "", 1},
		{20, "", 0, 20, "", "", 1},
		{21, "", 0, 20, "", "/l?client=a+b&page=2", 2},
		{21, "2", 20, 21, "/l?client=a+b", "", 2},
		{45, "2", 20, 40, "/l?client=a+b", "/l?client=a+b&page=3", 3},
		{45, "99", 40, 45, "/l?client=a+b&page=2", "", 3},
		{45, "-3", 0, 20, "", "/l?client=a+b&page=2", 3},
		{45, "x", 0, 20, "", "/l?client=a+b&page=2", 3},
	}
	for _, c := range cases {
		from, to, p := paginate(c.total, c.page, "/l", q)
		if from != c.from || to != c.to || p.PrevURL != c.wantPrev || p.NextURL != c.wantNext || p.Pages != c.pages {
			t.Errorf("paginate(%d, %q) = %d, %d, %+v", c.total, c.page, from, to, p)
		}
	}
}

func TestLines(t *testing.T) {
	got := lines("  https://a.example/cb \r\n\nhttp://127.0.0.1/cb\nhttps://a.example/cb\n")
	if diff := cmp.Diff([]string{"https://a.example/cb", "http://127.0.0.1/cb"}, got); diff != "" {
		t.Error(diff)
	}
	if got := lines(" \n "); got == nil || len(got) != 0 {
		t.Errorf("an empty box is %#v; want an empty, non-nil list (nil means unchanged)", got)
	}
}

// A flash message is seen once, and only by its session.
func TestFlashOncePerSession(t *testing.T) {
	h := testHandler(t)
	ctx := context.Background()
	rq := testRequest("owner")
	if err := h.setFlash(ctx, rq, flash{Kind: "ok", Message: "done", Secret: "lcs_s", SecretFor: "lct_x"}); err != nil {
		t.Fatal(err)
	}
	other := testRequest("owner")
	other.sess = &session.Session{SiteID: 7, UserID: "usr_a", CSRF: "another-session"}
	if f := h.takeFlash(ctx, other); f != nil {
		t.Fatalf("another session read the flash: %+v", f)
	}
	f := h.takeFlash(ctx, rq)
	if f == nil || f.Message != "done" || f.Secret != "lcs_s" {
		t.Fatalf("flash %+v", f)
	}
	if f := h.takeFlash(ctx, rq); f != nil {
		t.Fatalf("the flash was shown twice: %+v", f)
	}
}

// Refusals of the platform land next to the field they name.
func TestFieldErrorsFromPlatform(t *testing.T) {
	_, err := clientmeta.ValidateClient(clientmeta.ClientSpec{Name: "x", RedirectURIs: []string{"http://evil.example/cb"}})
	me, ok := err.(*clientmeta.MetadataError)
	if !ok {
		t.Fatalf("ValidateClient: %v", err)
	}
	var e fieldErrors
	e.set(me)
	if !strings.HasPrefix(e.RedirectURIs, `"http://evil.example/cb": plain http is allowed only for loopback`) || e.Form != "" {
		t.Fatalf("errors %+v", e)
	}
	e = fieldErrors{}
	e.set(&clientmeta.MetadataError{Field: "scope", Description: `scope: unknown scope "x"`})
	if e.Scopes != `unknown scope "x"` {
		t.Fatalf("errors %+v", e)
	}
	e = fieldErrors{}
	e.set(&clientmeta.MetadataError{Field: "jwks", Description: "jwks: no"})
	if e.Form != "jwks: no" {
		t.Fatalf("an unknown field must still be shown: %+v", e)
	}
}

// Requests reach pages only with a site (the tenant middleware's).
func TestHandlerNeedsSite(t *testing.T) {
	h := testHandler(t)
	h.mux = http.NewServeMux()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/admin", nil))
	if w.Code != http.StatusNotFound {
		t.Fatalf("status %d", w.Code)
	}
}

func TestScopeChoicesFollowAudience(t *testing.T) {
	var names []string
	for _, c := range scopeChoices(storage.AudienceMember, []string{"email"}) {
		names = append(names, c.Name)
		if c.Checked != (c.Name == "email") {
			t.Errorf("%s checked=%v", c.Name, c.Checked)
		}
	}
	if diff := cmp.Diff([]string{"openid", "profile", "email", "account:read", "account:write"}, names); diff != "" {
		t.Error(diff)
	}
	for _, c := range scopeChoices(storage.AudienceOperator, nil) {
		if strings.HasPrefix(c.Name, "account:") {
			t.Errorf("an operator application is offered %s", c.Name)
		}
	}
}

func TestMemFS(t *testing.T) {
	m := memFS{"templates/a.html": []byte("A"), "templates/b.txt": []byte("B"), "other/c.html": []byte("C")}
	got, err := fs.Glob(m, "templates/*.html")
	if err != nil || !slices.Equal(got, []string{"templates/a.html"}) {
		t.Fatalf("Glob: %v %v", got, err)
	}
	b, err := fs.ReadFile(m, "templates/a.html")
	if err != nil || string(b) != "A" {
		t.Fatalf("ReadFile: %q %v", b, err)
	}
	if _, err := m.Open("missing"); err == nil {
		t.Fatal("Open of a missing file succeeded")
	}
	if _, err := fs.Glob(m, "["); err == nil {
		t.Fatal("a bad pattern was accepted")
	}
}

func TestDeviceAndPlaceForPeople(t *testing.T) {
	for ua, want := range map[string]string{
		"Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0":                                                                  "Firefox on Linux",
		"Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 Mobile/15E148 Safari/604.1": "Safari on iPhone",
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36 Edg/131.0":                   "Edge on Windows",
		"": "Unknown device",
	} {
		if got := deviceOf("en", ua); got != want {
			t.Errorf("deviceOf(%q) = %q; want %q", ua, got, want)
		}
	}
	for _, c := range []struct{ ip, here, want string }{
		{"203.0.113.7", "203.0.113.99", "This network (203.0.113.0/24)"},
		{"203.0.113.7", "198.51.100.1", "Network 203.0.113.0/24"},
		{"2001:db8:1:2::5", "", "Network 2001:db8:1::/48"},
		{"", "203.0.113.7", "Unknown network"},
	} {
		if got := placeOf("en", c.ip, c.here); got != c.want {
			t.Errorf("placeOf(%q, %q) = %q; want %q", c.ip, c.here, got, c.want)
		}
	}
}

// An invitation to be an owner is an owner's to resend or revoke: other
// operators see neither button on its row (the routes refuse them too).
func TestOwnerInvitationActionsOnlyForOwners(t *testing.T) {
	h := testHandler(t)
	inv := storage.Invitation{ID: 4, Email: "boss@x", Role: storage.RoleOwner}
	for _, c := range []struct {
		roles  []string
		manage bool
	}{
		{[]string{storage.RoleOwner}, true},
		{[]string{storage.RoleAdmin}, false},
		{[]string{storage.RoleAdmin, storage.RoleLecturer}, false},
	} {
		if got := mayManageInvitation(&inv, c.roles); got != c.manage {
			t.Errorf("%v may manage an owner invitation: %v, want %v", c.roles, got, c.manage)
		}
		rq := testRequest(c.roles...)
		d := membersData{chrome: chromeFor(rq, "admin", "members"), Invitations: []invitationRow{{ID: 4, Email: "boss@x", Role: storage.RoleOwner,
			ResendURL: "/admin/members/invitations/4/resend", Revoke: "/admin/members/invitations/4/revoke", Manage: c.manage}}}
		w := httptest.NewRecorder()
		h.render(w, httptest.NewRequest(http.MethodGet, "/admin/members", nil), rq, http.StatusOK, "admin_members", "Members", d, nil)
		body := w.Body.String()
		if shown := strings.Contains(body, "/admin/members/invitations/4/resend") || strings.Contains(body, "/admin/members/invitations/4/revoke"); shown != c.manage {
			t.Errorf("%v: Resend/Revoke shown: %v, want %v", c.roles, shown, c.manage)
		}
	}
	if !mayManageInvitation(&storage.Invitation{Role: storage.RoleStudent}, []string{storage.RoleAdmin}) {
		t.Error("an admin may not manage a student invitation")
	}
}
