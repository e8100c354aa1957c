package integration

import (
	"context"
	"crypto/sha256"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lectern/lectern/authserver/clientmeta"
	"github.com/lectern/lectern/authserver/scope"
	"github.com/lectern/lectern/internal/demo"
	"github.com/lectern/lectern/storage"
)

// webMemberScopes are what the test applications are given.
var webMemberScopes = []string{scope.OpenID, scope.Profile, scope.Email, scope.AccountRead}

// Without a session every page sends the person to sign in and back; a
// form posted without one changes nothing.
func TestWebSignInFirst(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	anon := webAnonymous(t, ts, ts.academy())
	for path, back := range map[string]string{
		"/admin":                          "/admin",
		"/admin/developers/apps?page=2":   "/admin/developers/apps?page=2",
		"/account/connections":            "/account/connections",
		"/admin/settings":                 "/admin/settings",
		"/admin/developers/apps/anything": "/admin/developers/apps/anything",
	} {
		res := anon.expect(path, http.StatusSeeOther)
		if loc, want := res.Header.Get("Location"), "/login?return_to="+url.QueryEscape(back); loc != want {
			t.Errorf("GET %s without a session: Location %q, want %q", path, loc, want)
		}
	}
	res := anon.expectPost("/admin/settings/beta", url.Values{"enabled": {"off"}, "csrf_token": {"x"}}, http.StatusSeeOther)
	if loc := res.Header.Get("Location"); loc != "/login?return_to=%2Fadmin" {
		t.Errorf("POST without a session: Location %q", loc)
	}
	if !webAcademy(t, ts).MCPConnectionsBeta {
		t.Fatal("a POST without a session turned the beta off")
	}

	// Signing in with return_to comes back to the page.
	owner := webAnonymous(t, ts, ts.academy())
	f := owner.form("/login?return_to=%2Fadmin%2Fsettings", "login-form", url.Values{"email": {demo.OwnerEmail}, "password": {demo.OwnerPassword}})
	res = owner.expectPost("/login", f, http.StatusSeeOther)
	if loc := res.Header.Get("Location"); loc != "/admin/settings" {
		t.Fatalf("after sign-in: Location %q, want /admin/settings", loc)
	}
	owner.expect("/admin/settings", http.StatusOK)
	owner.expect("/account", http.StatusOK)
	for path, want := range map[string]string{"/admin/": "/admin", "/account/": "/account"} {
		if loc := owner.expect(path, http.StatusSeeOther).Header.Get("Location"); loc != want {
			t.Errorf("GET %s: Location %q, want %q", path, loc, want)
		}
	}
	// A plain sign-in (no return_to) lands on the account's connections.
	plain := webAnonymous(t, ts, ts.academy())
	f = plain.form("/login", "login-form", url.Values{"email": {demo.StudentEmail}, "password": {demo.StudentPassword}})
	if loc := plain.expectPost("/login", f, http.StatusSeeOther).Header.Get("Location"); loc != "/account/connections" {
		t.Fatalf("after a plain sign-in: Location %q", loc)
	}
	plain.expect("/account/connections", http.StatusOK)

	// A return_to that a browser would read as another origin (tabs are
	// dropped, a backslash is a slash) is ignored, before and after
	// sign-in and after sign-out.
	for _, evil := range []string{"/\t/evil.test", "/\t\\evil.test", "//evil.test", "/\\evil.test", "https://evil.test/"} {
		c := webAnonymous(t, ts, ts.academy())
		f := c.form("/login?return_to="+url.QueryEscape(evil), "login-form", url.Values{"email": {demo.StudentEmail}, "password": {demo.StudentPassword}})
		if f.Get("return_to") != "" {
			t.Errorf("the sign-in form carries return_to %q", f.Get("return_to"))
		}
		f.Set("return_to", evil)
		if loc := c.expectPost("/login", f, http.StatusSeeOther).Header.Get("Location"); loc != "/account/connections" {
			t.Errorf("sign-in with return_to %q: Location %q", evil, loc)
		}
		out := c.form("/logout?return_to="+url.QueryEscape(evil), "logout-form", nil)
		out.Set("return_to", evil)
		// Without a usable target, sign-out shows its own page.
		if loc := c.expectPost("/logout", out, http.StatusOK).Header.Get("Location"); loc != "" {
			t.Errorf("sign-out with return_to %q: Location %q", evil, loc)
		}
	}
}

// Who may open what: the admin area is for operators, settings, developer
// pages and the audit log for owners and admins; the account pages for
// everyone signed in.
func TestWebAccessByRole(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	owner := webSignIn(t, ts, ts.academy(), demo.OwnerEmail, demo.OwnerPassword)
	lecturer := webSignIn(t, ts, ts.academy(), demo.LecturerEmail, demo.LecturerPassword)
	student := webSignIn(t, ts, ts.academy(), demo.StudentEmail, demo.StudentPassword)
	outsider := webSignIn(t, ts, ts.academy(), demo.OutsiderEmail, demo.OutsiderPassword)
	appID, _ := owner.createApp("Access Check", "public", "http://127.0.0.1/callback", webMemberScopes...)

	managerPages := []string{
		"/admin/settings", "/admin/audit", "/admin/developers/apps", "/admin/developers/apps/new",
		"/admin/developers/apps/" + appID, "/admin/developers/apps/" + appID + "/delete", "/admin/developers/connections",
	}
	for _, p := range append([]string{"/admin", "/account/connections"}, managerPages...) {
		// Every page has a title in words, never a catalog key.
		title := webTitle(owner.expect(p, http.StatusOK).Body)
		if title == "" || catalogKey.MatchString(title) {
			t.Errorf("GET %s: title %q", p, title)
		}
	}
	if title := webTitle(owner.expect("/admin", http.StatusOK).Body); !strings.HasPrefix(title, "Admin dashboard") {
		t.Errorf("the dashboard's title is %q", title)
	}

	lecturer.expect("/admin", http.StatusOK)
	lecturer.expect("/account/connections", http.StatusOK)
	for _, p := range managerPages {
		page := lecturer.expect(p, http.StatusForbidden)
		if !strings.Contains(page.Body, "Only owners and admins") {
			t.Errorf("GET %s as a lecturer: the 403 page does not say why:\n%s", p, webExcerpt(page.Body))
		}
	}
	dash := lecturer.expect("/admin", http.StatusOK).Body
	for _, hidden := range []string{`href="/admin/settings"`, `id="nav-developers"`, `href="/admin/audit"`} {
		if strings.Contains(dash, hidden) {
			t.Errorf("the lecturer's dashboard links to what they may not open: %s", hidden)
		}
	}
	// A lecturer's well-formed POST is refused too.
	lecturer.expectPost("/admin/settings/beta", url.Values{"csrf_token": {lecturer.csrf()}, "enabled": {"off"}}, http.StatusForbidden)
	lecturer.expectPost("/admin/developers/apps", webAppValues(lecturer.csrf(), "Sneaky", "http://127.0.0.1/cb", "public", "openid"), http.StatusForbidden)
	if !webAcademy(t, ts).MCPConnectionsBeta {
		t.Fatal("a lecturer turned the beta off")
	}

	for _, p := range []*webPerson{student, outsider} {
		for _, path := range append([]string{"/admin"}, managerPages...) {
			p.expect(path, http.StatusForbidden)
		}
		if page := p.expect("/admin", http.StatusForbidden); !strings.Contains(page.Body, "have access to the admin area of Demo Academy") {
			t.Errorf("the 403 page does not explain itself:\n%s", webExcerpt(page.Body))
		}
		p.expect("/account/connections", http.StatusOK)
	}
	// Unknown pages are 404 for the people who may see the area.
	owner.expect("/admin/nothing-here", http.StatusNotFound)
	owner.expect("/account/nothing-here", http.StatusNotFound)
}

// catalogKey is what an untranslated message ID looks like on a page
// ("web.title.dashboard").
var catalogKey = regexp.MustCompile(`\b[a-z_]+(\.[a-z_]+)+\b`)

// webTitle is the text of a page's <title>.
func webTitle(page string) string {
	_, rest, ok := strings.Cut(page, "<title>")
	if !ok {
		return ""
	}
	title, _, _ := strings.Cut(rest, "</title>")
	return html.UnescapeString(title)
}

// While the beta is off the Developers section does not exist: not in the
// menu, and its URLs answer 404, for reading and for writing.
func TestWebDevelopersHiddenWhileBetaOff(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	owner := webSignIn(t, ts, ts.academy(), demo.OwnerEmail, demo.OwnerPassword)
	lecturer := webSignIn(t, ts, ts.academy(), demo.LecturerEmail, demo.LecturerPassword)
	appID, secret := owner.createApp("Hidden App", "confidential", "http://127.0.0.1/callback", webMemberScopes...)
	tok := webMemberToken(t, ts, appID, secret, webMemberScopes...)
	grants, err := ts.app.Store.ListGrants(context.Background(), webAcademy(t, ts).ID, "", false)
	if err != nil || len(grants) == 0 {
		t.Fatalf("grants: %v %v", grants, err)
	}
	grantID := grants[0].ID
	if !webHasID(t, owner.expect("/admin", http.StatusOK).Body, "nav-developers") {
		t.Fatal("Developers is not in the menu while the beta is on")
	}

	owner.setBeta(false)
	if webAcademy(t, ts).MCPConnectionsBeta {
		t.Fatal("the beta is still on")
	}
	if webHasID(t, owner.expect("/admin", http.StatusOK).Body, "nav-developers") {
		t.Fatal("Developers is in the menu while the beta is off")
	}
	csrf := owner.csrf()
	app := "/admin/developers/apps/" + appID
	for _, p := range []string{"/admin/developers/apps", "/admin/developers/apps/new", app, app + "/delete", app + "/rotate-secret",
		"/admin/developers/connections", "/admin/developers/connections/" + grantID + "/revoke"} {
		owner.expect(p, http.StatusNotFound)
		lecturer.expect(p, http.StatusNotFound)
	}
	confirm := url.Values{"csrf_token": {csrf}, "confirm": {"yes"}}
	owner.expectPost("/admin/developers/apps", webAppValues(csrf, "New", "http://127.0.0.1/cb", "public", "openid"), http.StatusNotFound)
	owner.expectPost(app, webAppValues(csrf, "Renamed", "http://127.0.0.1/cb", "", "openid"), http.StatusNotFound)
	owner.expectPost(app+"/delete", confirm, http.StatusNotFound)
	owner.expectPost(app+"/rotate-secret", confirm, http.StatusNotFound)
	owner.expectPost("/admin/developers/connections/"+grantID+"/revoke", confirm, http.StatusNotFound)
	if names := webAppNames(t, ts); !slices.Equal(names, []string{"Demo Member App", "Hidden App"}) {
		t.Fatalf("applications changed while Developers was hidden: %v", names)
	}
	if code := webUserinfoStatus(t, ts, tok); code != http.StatusOK {
		t.Fatalf("turning the beta off broke a connection: userinfo %d", code)
	}

	owner.setBeta(true)
	owner.expect(app, http.StatusOK)
	lecturer.expect(app, http.StatusForbidden)
	actions := webAuditActions(t, ts)
	if n := strings.Count(strings.Join(actions, ","), "site.beta_changed"); n != 2 {
		t.Fatalf("audit: %d site.beta_changed events, want 2: %v", n, actions)
	}
}

// Every form refuses a missing or wrong CSRF token with 403 and changes
// nothing; so does the token of another session.
func TestWebCSRFOnEveryForm(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	owner := webSignIn(t, ts, ts.academy(), demo.OwnerEmail, demo.OwnerPassword)
	student := webSignIn(t, ts, ts.academy(), demo.StudentEmail, demo.StudentPassword)
	appID, secret := owner.createApp("CSRF Target", "confidential", "http://127.0.0.1/callback", webMemberScopes...)
	tok := webMemberToken(t, ts, appID, secret, webMemberScopes...)
	site := webAcademy(t, ts).ID
	grants, _ := ts.app.Store.ListGrants(context.Background(), site, "", false)
	if len(grants) != 1 {
		t.Fatalf("grants %+v", grants)
	}
	app := "/admin/developers/apps/" + appID
	foreign := student.csrf() // a real token, of another session
	forms := []struct {
		name   string
		who    *webPerson
		path   string
		values url.Values
	}{
		{"beta toggle", owner, "/admin/settings/beta", url.Values{"enabled": {"off"}}},
		{"create application", owner, "/admin/developers/apps", webAppValues("", "Forged", "http://127.0.0.1/cb", "public", "openid")},
		{"edit application", owner, app, webAppValues("", "Forged name", "http://127.0.0.1/cb", "", "openid")},
		{"rotate secret", owner, app + "/rotate-secret", url.Values{"confirm": {"yes"}}},
		{"delete application", owner, app + "/delete", url.Values{"confirm": {"yes"}}},
		{"revoke a connection (admin)", owner, "/admin/developers/connections/" + grants[0].ID + "/revoke", url.Values{"confirm": {"yes"}}},
		{"revoke a connection (member)", student, "/account/connections/revoke", url.Values{"confirm": {"yes"}, "client_id": {appID}}},
	}
	for _, f := range forms {
		otherSession := foreign
		if f.who == student {
			otherSession = owner.csrf()
		}
		for _, token := range []string{"", "wrong-" + randomHex(8), otherSession} {
			v := url.Values{}
			for k, vs := range f.values {
				v[k] = vs
			}
			v.Del("csrf_token")
			if token != "" {
				v.Set("csrf_token", token)
			}
			page := f.who.post(f.path, v)
			if page.Status != http.StatusForbidden || !strings.Contains(page.Body, "Nothing was changed") {
				t.Errorf("%s with token %q: status %d, want 403 with an explanation\n%s", f.name, token, page.Status, webExcerpt(page.Body))
			}
		}
	}
	// Nothing changed.
	if !webAcademy(t, ts).MCPConnectionsBeta {
		t.Error("the beta was turned off")
	}
	if names := webAppNames(t, ts); !slices.Equal(names, []string{"CSRF Target", "Demo Member App"}) {
		t.Errorf("applications changed: %v", names)
	}
	if code := webUserinfoStatus(t, ts, tok); code != http.StatusOK {
		t.Errorf("the connection was revoked: userinfo %d", code)
	}
	if _, err := webTryToken(t, ts, appID, secret); err != nil {
		t.Errorf("the secret was rotated: %v", err)
	}
	// And the real forms work.
	owner.expectPost("/admin/settings/beta", owner.form("/admin/settings", "beta-form", nil), http.StatusSeeOther)
}

// Bad input is shown next to its field, with the platform's description,
// and nothing is created or changed.
func TestWebApplicationFormErrors(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	owner := webSignIn(t, ts, ts.academy(), demo.OwnerEmail, demo.OwnerPassword)
	csrf := owner.csrf()
	cases := []struct {
		name      string
		values    url.Values
		fieldID   string
		wantInMsg string
	}{
		{"plain http to a public host", webAppValues(csrf, "Bad Redirect", "http://evil.example/cb", "public", "openid"),
			"app-redirects-error", "plain http is allowed only for loopback addresses"},
		{"a fragment", webAppValues(csrf, "Bad Redirect", "https://app.example/cb#x", "public", "openid"),
			"app-redirects-error", "has a fragment"},
		{"no redirect URI", webAppValues(csrf, "No Redirect", "\n  \n", "public", "openid"),
			"app-redirects-error", "at least one redirect URI is required"},
		{"a custom scheme", webAppValues(csrf, "Bad Scheme", "myapp://callback", "public", "openid"),
			"app-redirects-error", "the myapp: scheme is not allowed"},
		{"javascript", webAppValues(csrf, "Script", "javascript:alert(1)", "public", "openid"),
			"app-redirects-error", "is not an absolute URI"},
		{"unknown scope", webAppValues(csrf, "Bad Scope", "http://127.0.0.1/cb", "public", "openid", "courses:fly"),
			"app-scopes-error", `unknown scope "courses:fly"`},
		{"operator scope", webAppValues(csrf, "Operator Scope", "http://127.0.0.1/cb", "public", "openid", "students:read"),
			"app-scopes-error", "a member client may only have member scopes"},
		{"no scope", webAppValues(csrf, "No Scope", "http://127.0.0.1/cb", "public"),
			"app-scopes-error", "Choose at least one permission"},
		{"no name", webAppValues(csrf, "  ", "http://127.0.0.1/cb", "public", "openid"),
			"app-name-error", "is required"},
		{"no type", webAppValues(csrf, "No Type", "http://127.0.0.1/cb", "", "openid"),
			"type-error", "Choose whether the application can keep a secret"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			page := owner.expectPost("/admin/developers/apps", c.values, http.StatusBadRequest)
			msg := webTextByID(t, page.Body, c.fieldID)
			if !strings.Contains(msg, c.wantInMsg) {
				t.Errorf("#%s says %q; want it to contain %q", c.fieldID, msg, c.wantInMsg)
			}
			// The person's input stays in the form.
			if name := strings.TrimSpace(c.values.Get("name")); name != "" && !strings.Contains(page.Body, `value="`+name+`"`) {
				t.Errorf("the form lost the name %q", name)
			}
			if !strings.Contains(page.Body, `aria-invalid="true"`) && c.fieldID != "app-scopes-error" && c.fieldID != "type-error" {
				t.Error("the field is not marked aria-invalid")
			}
		})
	}
	// Bytes that are not text never reach the store.
	for _, c := range []struct {
		values           url.Values
		fieldID, wantMsg string
	}{
		{webAppValues(csrf, "x\xffy", "http://127.0.0.1/cb", "public", "openid"), "app-name-error", "valid UTF-8"},
		{webAppValues(csrf, "Bad URI", "https://a\xff.example/cb", "public", "openid"), "app-redirects-error", "non-ASCII"},
		{webAppValues(csrf, "Unicode URI", "http://127.0.0.1/caf\u00e9", "public", "openid"), "app-redirects-error", "non-ASCII"},
	} {
		page := owner.expectPost("/admin/developers/apps", c.values, http.StatusBadRequest)
		if msg := webTextByID(t, page.Body, c.fieldID); !strings.Contains(msg, c.wantMsg) {
			t.Errorf("#%s says %q; want it to contain %q", c.fieldID, msg, c.wantMsg)
		}
	}
	if names := webAppNames(t, ts); !slices.Equal(names, []string{"Demo Member App"}) {
		t.Fatalf("refused forms created applications: %v", names)
	}

	// Editing refuses the same way and keeps the application as it was.
	appID, _ := owner.createApp("Editable", "public", "http://127.0.0.1/callback", webMemberScopes...)
	page := owner.expectPost("/admin/developers/apps/"+appID, webAppValues(csrf, "Edited", "ftp://files.example/cb", "", "openid"), http.StatusBadRequest)
	if msg := webTextByID(t, page.Body, "app-redirects-error"); !strings.Contains(msg, "scheme is not allowed") {
		t.Errorf("edit error: %q", msg)
	}
	page = owner.expectPost("/admin/developers/apps/"+appID, webAppValues(csrf, "Edited", "http://127.0.0.1/callback", "", "openid", "nope"), http.StatusBadRequest)
	if msg := webTextByID(t, page.Body, "app-scopes-error"); !strings.Contains(msg, `unknown scope "nope"`) {
		t.Errorf("edit error: %q", msg)
	}
	c, err := ts.app.Platform.Application(context.Background(), webAcademy(t, ts).ID, appID)
	if err != nil || c.Name != "Editable" || !slices.Equal(c.Scopes, webMemberScopes) {
		t.Fatalf("a refused edit changed the application: %+v %v", c, err)
	}
	// A good edit saves, with a flash message shown once.
	owner.expectPost("/admin/developers/apps/"+appID, webAppValues(csrf, "Edited", "http://127.0.0.1/callback\nhttps://app.example/cb", "", "openid", "account:write"), http.StatusSeeOther)
	page = owner.expect("/admin/developers/apps/"+appID, http.StatusOK)
	if !strings.Contains(page.Body, "Your changes to Edited were saved.") {
		t.Error("no flash message after saving")
	}
	if strings.Contains(owner.expect("/admin/developers/apps/"+appID, http.StatusOK).Body, "were saved") {
		t.Error("the flash message was shown twice")
	}
	c, _ = ts.app.Platform.Application(context.Background(), webAcademy(t, ts).ID, appID)
	if c.Name != "Edited" || !slices.Equal(c.Scopes, []string{"openid", "account:write"}) || len(c.RedirectURIs) != 2 {
		t.Fatalf("edit not saved: %+v", c)
	}
	if !slices.Contains(webAuditActions(t, ts), "client.updated") {
		t.Error("no client.updated audit event")
	}
}

// Deleting an application takes a confirmation step, then revokes every
// grant: a token issued to it is refused at once.
func TestWebDeleteApplication(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, nil)
		owner := webSignIn(t, ts, ts.academy(), demo.OwnerEmail, demo.OwnerPassword)
		appID, _ := owner.createApp("Doomed", "public", "http://127.0.0.1/callback", webMemberScopes...)
		tok := webMemberToken(t, ts, appID, "", webMemberScopes...)
		if code := webUserinfoStatus(t, ts, tok); code != http.StatusOK {
			t.Fatalf("userinfo before deletion: %d", code)
		}
		app := "/admin/developers/apps/" + appID

		// The application page links to a confirmation page, not to an
		// action.
		if !strings.Contains(owner.expect(app, http.StatusOK).Body, `href="`+app+`/delete"`) {
			t.Fatal("no link to the delete confirmation")
		}
		confirm := owner.expect(app+"/delete", http.StatusOK)
		if msg := webTextByID(t, confirm.Body, "confirm-message"); msg != "Delete Doomed?" {
			t.Fatalf("confirmation says %q", msg)
		}
		if !strings.Contains(confirm.Body, "1 connection") {
			t.Error("the confirmation does not say how many connections go")
		}
		// A POST without the confirmation field shows the confirmation
		// again and deletes nothing.
		page := owner.expectPost(app+"/delete", url.Values{"csrf_token": {owner.csrf()}}, http.StatusOK)
		if !webHasID(t, page.Body, "confirm-form") {
			t.Fatal("an unconfirmed delete did not ask for confirmation")
		}
		owner.expect(app, http.StatusOK)
		if code := webUserinfoStatus(t, ts, tok); code != http.StatusOK {
			t.Fatalf("an unconfirmed delete revoked the token: %d", code)
		}

		res := owner.expectPost(app+"/delete", owner.form(app+"/delete", "confirm-form", nil), http.StatusSeeOther)
		if loc := res.Header.Get("Location"); loc != "/admin/developers/apps" {
			t.Fatalf("after delete: Location %q", loc)
		}
		list := owner.expect("/admin/developers/apps", http.StatusOK)
		if !strings.Contains(list.Body, "Doomed was deleted and 1 connection revoked.") {
			t.Errorf("no flash message:\n%s", webExcerpt(list.Body))
		}
		owner.expect(app, http.StatusNotFound)
		if code := webUserinfoStatus(t, ts, tok); code != http.StatusUnauthorized {
			t.Fatalf("userinfo with a token of the deleted application: %d, want 401", code)
		}
		actions := webAuditActions(t, ts)
		for _, want := range []string{"client.created", "client.deleted"} {
			if !slices.Contains(actions, want) {
				t.Errorf("audit lacks %s: %v", want, actions)
			}
		}
	})
}

// The client secret is shown once after creation and after rotation; the
// old secret stops working when rotated.
func TestWebClientSecretShownOnceAndRotated(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	owner := webSignIn(t, ts, ts.academy(), demo.OwnerEmail, demo.OwnerPassword)
	appID, secret := owner.createApp("Server App", "confidential", "http://127.0.0.1/callback", webMemberScopes...)
	if !strings.HasPrefix(secret, "lcs_") {
		t.Fatalf("secret %q", secret)
	}
	app := "/admin/developers/apps/" + appID
	if page := owner.expect(app, http.StatusOK); webHasID(t, page.Body, "client-secret") || strings.Contains(page.Body, secret) {
		t.Fatal("the secret is shown a second time")
	}
	// Public applications have no secret to rotate.
	pubID, _ := owner.createApp("Device App", "public", "http://127.0.0.1/callback", webMemberScopes...)
	if strings.Contains(owner.expect("/admin/developers/apps/"+pubID, http.StatusOK).Body, "rotate-secret") {
		t.Error("a public application offers to rotate its secret")
	}

	confirm := owner.expect(app+"/rotate-secret", http.StatusOK)
	if !strings.Contains(webTextByID(t, confirm.Body, "confirm-message"), "Rotate the client secret of Server App") {
		t.Fatalf("rotation confirmation:\n%s", webExcerpt(confirm.Body))
	}
	owner.expectPost(app+"/rotate-secret", url.Values{"csrf_token": {owner.csrf()}}, http.StatusOK) // unconfirmed: asks again
	if _, err := webTryToken(t, ts, appID, secret); err != nil {
		t.Fatalf("an unconfirmed rotation changed the secret: %v", err)
	}
	res := owner.expectPost(app+"/rotate-secret", owner.form(app+"/rotate-secret", "confirm-form", nil), http.StatusSeeOther)
	page := owner.expect(res.Header.Get("Location"), http.StatusOK)
	fresh := webTextByID(t, page.Body, "client-secret")
	if fresh == secret || !strings.HasPrefix(fresh, "lcs_") {
		t.Fatalf("new secret %q", fresh)
	}
	if _, err := webTryToken(t, ts, appID, secret); oauthErrorCode(err) != "invalid_client" {
		t.Fatalf("the old secret after rotation: %v, want invalid_client", err)
	}
	if _, err := webTryToken(t, ts, appID, fresh); err != nil {
		t.Fatalf("the new secret: %v", err)
	}
	if !slices.Contains(webAuditActions(t, ts), "client.secret_rotated") {
		t.Error("no client.secret_rotated audit event")
	}
}

// webTryToken runs the code flow for the student and exchanges the code
// with secret.
func webTryToken(t *testing.T, ts *testServer, clientID, secret string) (string, error) {
	t.Helper()
	f := newFlow(t, ts, ts.academy(), clientID, webMemberScopes...)
	f.conf.ClientSecret = secret
	tok, err := f.exchange(f.authorize(demo.StudentEmail, demo.StudentPassword))
	if err != nil {
		return "", err
	}
	return tok.AccessToken, nil
}

// A member sees the apps they authorized, in plain words, and revoking one
// stops its token at once (after a confirmation step).
func TestWebMemberRevokesConnection(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, nil)
		owner := webSignIn(t, ts, ts.academy(), demo.OwnerEmail, demo.OwnerPassword)
		appID, _ := owner.createApp("Study Buddy", "public", "http://127.0.0.1/callback", webMemberScopes...)
		tok := webMemberToken(t, ts, appID, "", webMemberScopes...)
		other := webMemberToken(t, ts, demo.MemberClientID, "", webMemberScopes...) // another app stays connected

		student := webSignIn(t, ts, ts.academy(), demo.StudentEmail, demo.StudentPassword)
		list := student.expect("/account/connections", http.StatusOK).Body
		for _, want := range []string{"Study Buddy", "View your enrollments, progress, purchases and notifications", "See your e-mail address", "Demo Member App"} {
			if !strings.Contains(list, want) {
				t.Errorf("the connections page lacks %q", want)
			}
		}
		// Another person sees none of them.
		lecturer := webSignIn(t, ts, ts.academy(), demo.LecturerEmail, demo.LecturerPassword)
		if page := lecturer.expect("/account/connections", http.StatusOK); !webHasID(t, page.Body, "no-connections") {
			t.Error("the lecturer sees someone else's connections")
		}
		lecturer.expect("/account/connections/revoke?client_id="+url.QueryEscape(appID), http.StatusNotFound)
		lecturer.expectPost("/account/connections/revoke", url.Values{"csrf_token": {lecturer.csrf()}, "confirm": {"yes"}, "client_id": {appID}}, http.StatusNotFound)
		if code := webUserinfoStatus(t, ts, tok); code != http.StatusOK {
			t.Fatalf("the lecturer revoked the student's connection: %d", code)
		}

		revoke := "/account/connections/revoke?client_id=" + url.QueryEscape(appID)
		if !strings.Contains(list, `href="`+strings.ReplaceAll(revoke, "&", "&amp;")+`"`) {
			t.Fatalf("no revoke link %s on the page", revoke)
		}
		student.expectPost("/account/connections/revoke", url.Values{"csrf_token": {student.csrf()}, "client_id": {appID}}, http.StatusOK)
		if code := webUserinfoStatus(t, ts, tok); code != http.StatusOK {
			t.Fatalf("an unconfirmed revoke revoked: %d", code)
		}
		res := student.expectPost("/account/connections/revoke", student.form(revoke, "confirm-form", nil), http.StatusSeeOther)
		if loc := res.Header.Get("Location"); loc != "/account/connections" {
			t.Fatalf("after revoke: Location %q", loc)
		}
		if code := webUserinfoStatus(t, ts, tok); code != http.StatusUnauthorized {
			t.Fatalf("userinfo after revoke: %d, want 401", code)
		}
		if code, body := webGraphQL(t, ts, tok); code != http.StatusUnauthorized {
			t.Fatalf("/member/graphql after revoke: %d %s, want 401", code, body)
		}
		if code := webUserinfoStatus(t, ts, other); code != http.StatusOK {
			t.Fatalf("revoking Study Buddy revoked another app: %d", code)
		}
		page := student.expect("/account/connections", http.StatusOK).Body
		if !strings.Contains(page, "Study Buddy&#39;s access was revoked") || strings.Contains(page, `data-client-id="`+appID+`"`) {
			t.Errorf("after revoke the page still lists the app or has no message:\n%s", webExcerpt(page))
		}
		if !slices.Contains(webAuditActions(t, ts), "grant.revoked") {
			t.Error("no grant.revoked audit event")
		}
		// Connecting again asks for permission again, although the
		// student is signed in and had approved these scopes.
		f := newFlow(t, ts, ts.academy(), appID, webMemberScopes...)
		student.untilConsent(t, ts.academy(), f.authURL())
	})
}

// The admin sees every connection at the site and can revoke one.
func TestWebAdminRevokesConnection(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	owner := webSignIn(t, ts, ts.academy(), demo.OwnerEmail, demo.OwnerPassword)
	appID, _ := owner.createApp("Planner", "public", "http://127.0.0.1/callback", webMemberScopes...)
	tok := webMemberToken(t, ts, appID, "", webMemberScopes...)
	list := owner.expect("/admin/developers/connections", http.StatusOK).Body
	for _, want := range []string{"Planner", demo.StudentEmail, "account:read", "just now"} {
		if !strings.Contains(list, want) {
			t.Errorf("connected apps lacks %q", want)
		}
	}
	filtered := owner.expect("/admin/developers/connections?client="+url.QueryEscape(appID), http.StatusOK).Body
	if !strings.Contains(filtered, "for <strong>Planner</strong>") {
		t.Error("the filtered list does not name the application")
	}
	grants, _ := ts.app.Store.ListGrants(context.Background(), webAcademy(t, ts).ID, "", false)
	path := "/admin/developers/connections/" + grants[0].ID + "/revoke"
	if !strings.Contains(list, `href="`+path+`"`) {
		t.Fatalf("no revoke link %s", path)
	}
	owner.expectPost(path, owner.form(path, "confirm-form", nil), http.StatusSeeOther)
	if code := webUserinfoStatus(t, ts, tok); code != http.StatusUnauthorized {
		t.Fatalf("userinfo after an admin revoked: %d", code)
	}
	owner.expect(path, http.StatusNotFound) // revoked: nothing left to revoke
	if !strings.Contains(owner.expect("/admin/developers/connections", http.StatusOK).Body, "Planner can no longer access student@demo.test&#39;s account.") {
		t.Error("no flash message after revoking")
	}
}

// Long lists are paginated: applications by page number, the audit log by
// keyset.
func TestWebPagination(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	owner := webSignIn(t, ts, ts.academy(), demo.OwnerEmail, demo.OwnerPassword)
	site := webAcademy(t, ts).ID
	var bulk *storage.Client
	for i := range 23 {
		c, _, err := ts.app.Platform.CreateClient(context.Background(), site, clientmeta.ClientSpec{
			Name: fmt.Sprintf("Bulk App %02d", i), RedirectURIs: []string{"http://127.0.0.1/cb"},
			Audience: storage.AudienceMember, Source: storage.SourceAdmin, Reviewed: true,
		})
		if err != nil {
			t.Fatal(err)
		}
		bulk = c
	}
	first := owner.expect("/admin/developers/apps", http.StatusOK).Body
	if n := strings.Count(first, "Bulk App "); n != 20 {
		t.Fatalf("page 1 lists %d applications, want 20", n)
	}
	// 23 and the demo seed's member application.
	if !strings.Contains(first, `href="/admin/developers/apps?page=2"`) || !strings.Contains(first, "Showing 1–20 of 24") {
		t.Fatalf("page 1 has no pager:\n%s", webExcerpt(first))
	}
	second := owner.expect("/admin/developers/apps?page=2", http.StatusOK).Body
	if n := strings.Count(second, "Bulk App "); n != 3 || !strings.Contains(second, "Demo Member App") || !strings.Contains(second, `href="/admin/developers/apps"`) {
		t.Fatalf("page 2 lists %d bulk applications, want 3 and the demo's, with a link back", n)
	}
	owner.expect("/admin/developers/apps?page=99", http.StatusOK) // clamped to the last page

	// Connected apps: 23 grants of the demo member app and 2 of a bulk app,
	// a minute apart, newest last; the store reads one page at a time.
	student, err := ts.app.Store.UserByEmail(context.Background(), demo.StudentEmail)
	if err != nil {
		t.Fatal(err)
	}
	var grantIDs []string
	start := time.Now().Add(-time.Hour)
	for i := range 25 {
		client := demo.MemberClientID
		if i >= 23 {
			client = bulk.ClientID
		}
		id := fmt.Sprintf("grant-bulk-%02d", i)
		at := start.Add(time.Duration(i) * time.Minute)
		sum := sha256.Sum256([]byte(id))
		g := &storage.Grant{ID: id, SiteID: site, ClientID: client, UserID: student.ID, Scopes: []string{scope.AccountRead},
			Resource: ts.academy(), AuthTime: at, CreatedAt: at, ExpiresAt: at.Add(24 * time.Hour), LastUsedAt: at}
		rt := &storage.RefreshToken{TokenHash: sum[:], CreatedAt: at, ExpiresAt: at.Add(24 * time.Hour)}
		if err := ts.app.Store.CreateGrant(context.Background(), g, rt); err != nil {
			t.Fatal(err)
		}
		grantIDs = append(grantIDs, id)
	}
	revokeLink := func(i int) string { return `href="/admin/developers/connections/` + grantIDs[i] + `/revoke"` }
	rows := func(body string) int { return strings.Count(body, `data-label="Member"`) }
	list := owner.expect("/admin/developers/connections", http.StatusOK).Body
	if rows(list) != 20 || !strings.Contains(list, "Showing 1–20 of 25") || !strings.Contains(list, revokeLink(24)) || strings.Contains(list, revokeLink(4)) {
		t.Fatalf("connections page 1 shows %d rows, want the newest 20 of 25:\n%s", rows(list), webExcerpt(list))
	}
	for _, path := range []string{"/admin/developers/connections?page=2", "/admin/developers/connections?page=99"} {
		body := owner.expect(path, http.StatusOK).Body
		if rows(body) != 5 || !strings.Contains(body, "Showing 21–25 of 25") || !strings.Contains(body, revokeLink(0)) {
			t.Fatalf("%s shows %d rows, want the oldest 5 of 25:\n%s", path, rows(body), webExcerpt(body))
		}
	}
	filtered := owner.expect("/admin/developers/connections?client="+url.QueryEscape(demo.MemberClientID)+"&page=2", http.StatusOK).Body
	if rows(filtered) != 3 || !strings.Contains(filtered, "Showing 21–23 of 23") || strings.Contains(filtered, revokeLink(23)) {
		t.Fatalf("the member app's page 2 shows %d rows, want its oldest 3 of 23:\n%s", rows(filtered), webExcerpt(filtered))
	}
	if dash := owner.expect("/admin", http.StatusOK).Body; !strings.Contains(dash, "25 connections") {
		t.Errorf("the dashboard does not count 25 connections:\n%s", webExcerpt(dash))
	}

	for range 15 {
		owner.setBeta(false)
		owner.setBeta(true)
	}
	events, _ := ts.app.Store.ListAudit(context.Background(), site, 0, 1000)
	if len(events) < 30 {
		t.Fatalf("only %d audit events", len(events))
	}
	seen := map[string]bool{}
	path := "/admin/audit"
	pages := 0
	for path != "" {
		body := owner.expect(path, http.StatusOK).Body
		rows := strings.Count(body, `data-label="When"`)
		if rows == 0 || rows > 25 {
			t.Fatalf("%s shows %d events", path, rows)
		}
		pages++
		path = ""
		if i := strings.Index(body, `rel="next"`); i >= 0 {
			start := strings.LastIndex(body[:i], `href="`) + len(`href="`)
			path = strings.ReplaceAll(body[start:strings.Index(body[start:], `"`)+start], "&amp;", "&")
			if seen[path] {
				t.Fatalf("the audit log loops at %s", path)
			}
			seen[path] = true
		}
	}
	if want := (len(events) + 24) / 25; pages != want {
		t.Fatalf("the audit log has %d pages for %d events, want %d", pages, len(events), want)
	}
}

// Pages carry the renderer's security headers; nothing under /admin or
// /account is cached.
func TestWebSecurityHeaders(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	owner := webSignIn(t, ts, ts.academy(), demo.OwnerEmail, demo.OwnerPassword)
	for _, p := range []string{"/admin", "/admin/developers/apps/new", "/account/connections", "/admin/nothing"} {
		page := owner.get(p)
		h := page.Header
		if h.Get("X-Frame-Options") != "DENY" || !strings.Contains(h.Get("Content-Security-Policy"), "frame-ancestors 'none'") ||
			h.Get("Cache-Control") != "no-store" || h.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s headers: %v", p, h)
		}
	}
}

// Each site's admin area shows and changes only that site: the owner of
// both demo sites cannot reach one site's application or grant through the
// other's origin.
func TestWebSitesAreSeparate(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	academy := webSignIn(t, ts, ts.academy(), demo.OwnerEmail, demo.OwnerPassword)
	appID, _ := academy.createApp("Academy Only", "public", "http://127.0.0.1/callback", webMemberScopes...)
	tok := webMemberToken(t, ts, appID, "", webMemberScopes...)
	grants, _ := ts.app.Store.ListGrants(context.Background(), webAcademy(t, ts).ID, "", false)

	open := webSignIn(t, ts, ts.open(), demo.OwnerEmail, demo.OwnerPassword)
	open.expect("/admin", http.StatusOK)
	open.expect("/admin/developers/apps", http.StatusNotFound) // the beta is off at Open School
	open.setBeta(true)
	if strings.Contains(open.expect("/admin/developers/apps", http.StatusOK).Body, "Academy Only") {
		t.Fatal("Open School lists Demo Academy's application")
	}
	app := "/admin/developers/apps/" + appID
	open.expect(app, http.StatusNotFound)
	confirm := url.Values{"csrf_token": {open.csrf()}, "confirm": {"yes"}}
	open.expectPost(app+"/delete", confirm, http.StatusNotFound)
	open.expectPost("/admin/developers/connections/"+grants[0].ID+"/revoke", confirm, http.StatusNotFound)
	if strings.Contains(open.expect("/admin/developers/connections", http.StatusOK).Body, "Academy Only") {
		t.Fatal("Open School lists Demo Academy's connection")
	}
	if code := webUserinfoStatus(t, ts, tok); code != http.StatusOK {
		t.Fatalf("Open School's admin area revoked Demo Academy's grant: %d", code)
	}
	if !webAcademy(t, ts).MCPConnectionsBeta {
		t.Fatal("turning the beta on at Open School changed Demo Academy")
	}
	// The student's connections at Open School do not include Demo Academy's.
	student := webSignIn(t, ts, ts.open(), demo.StudentEmail, demo.StudentPassword)
	if page := student.expect("/account/connections", http.StatusOK); !webHasID(t, page.Body, "no-connections") {
		t.Fatal("Open School shows the student's Demo Academy connections")
	}
}

// A consent form sent without a decision decides nothing: the request
// stays pending and the same form then completes the flow.
func TestWebConsentWithoutDecision(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	owner := webSignIn(t, ts, ts.academy(), demo.OwnerEmail, demo.OwnerPassword)
	appID, _ := owner.createApp("Decider", "public", "http://127.0.0.1/callback", webMemberScopes...)
	student := webSignIn(t, ts, ts.academy(), demo.StudentEmail, demo.StudentPassword)
	f := newFlow(t, ts, ts.academy(), appID, webMemberScopes...)
	last := student.untilConsent(t, ts.academy(), f.authURL())
	form := student.form(last.URL.RequestURI(), "consent-form", nil)
	form.Del("decision")
	student.expectPost("/consent", form, http.StatusBadRequest)
	form.Set("decision", "approve")
	loc := student.expectPost("/consent", form, http.StatusFound).Header.Get("Location")
	if u, err := url.Parse(loc); err != nil || u.Host != "127.0.0.1" && !strings.HasPrefix(u.Host, "127.0.0.1:") || u.Query().Get("code") == "" {
		t.Fatalf("approving after a form without a decision: Location %q", loc)
	}
}
