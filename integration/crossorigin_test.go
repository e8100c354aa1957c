package integration

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/lectern/lectern/internal/demo"
	"github.com/lectern/lectern/internal/oauthtest"
)

// coPost submits a form as p's browser with extra request headers
// (name, value pairs).
func coPost(t *testing.T, p *webPerson, path string, v url.Values, hdr ...string) *oauthtest.Page {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, p.origin+path, strings.NewReader(v.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := p.b.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body strings.Builder
	_, _ = io.Copy(&body, resp.Body)
	return &oauthtest.Page{URL: req.URL, Status: resp.StatusCode, Header: resp.Header, Body: body.String()}
}

// The browser headers of a form posted from another site: an old browser
// (Origin only), a current one (Sec-Fetch-Site too), and one that sends
// Sec-Fetch-Site alone.
func crossOriginHeaders(ts *testServer) map[string][]string {
	return map[string][]string{
		"foreign Origin":                    {"Origin", "https://evil.example"},
		"foreign Origin, cross-site":        {"Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site"},
		"Sec-Fetch-Site cross-site":         {"Sec-Fetch-Site", "cross-site"},
		"the other demo site (same server)": {"Origin", ts.open(), "Sec-Fetch-Site", "same-site"},
	}
}

// Every cookie-authenticated form (sign-in, consent, sign-out, the admin
// area, account pages) refuses a POST a browser marks as cross-origin with
// 403, even with a valid CSRF token, and changes nothing; the site's own
// pages and clients that send neither header still work.
func TestCrossOriginFormsRefused(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, nil)
		ctx := context.Background()
		origin := ts.academy()
		sameOrigin := []string{"Origin", origin, "Sec-Fetch-Site", "same-origin"}

		t.Run("consent", func(t *testing.T) {
			student := webSignIn(t, ts, origin, demo.StudentEmail, demo.StudentPassword)
			f := newFlow(t, ts, origin, demo.MemberClientID, webMemberScopes...)
			page := student.untilConsent(t, origin, f.authURL())
			form := student.form(page.URL.RequestURI(), "consent-form", url.Values{"decision": {"approve"}})
			for name, hdr := range crossOriginHeaders(ts) {
				res := coPost(t, student, "/consent", form, hdr...)
				if res.Status != http.StatusForbidden || strings.Contains(res.Header.Get("Location"), "code=") {
					t.Fatalf("%s: %d Location %q; want 403 and no code", name, res.Status, res.Header.Get("Location"))
				}
				if !strings.Contains(res.Body, "did not come from this site") {
					t.Errorf("%s: the refusal does not say why:\n%s", name, webExcerpt(res.Body))
				}
			}
			// Still pending: the site's own page approves it.
			res := coPost(t, student, "/consent", form, sameOrigin...)
			loc, _ := url.Parse(res.Header.Get("Location"))
			if res.Status != http.StatusFound || loc == nil || loc.Query().Get("code") == "" {
				t.Fatalf("same-origin approval: %d Location %q", res.Status, res.Header.Get("Location"))
			}
			// A client without browser headers (no Origin, no
			// Sec-Fetch-Site) works as before.
			f = newFlow(t, ts, origin, demo.MemberClientID, webMemberScopes...)
			grants, _ := ts.app.Store.ListGrants(ctx, webAcademy(t, ts).ID, "", false)
			before := len(grants)
			if _, err := f.exchange(f.authorize(demo.StudentEmail, demo.StudentPassword)); err != nil {
				t.Fatalf("a flow without browser headers: %v", err)
			}
			if grants, _ = ts.app.Store.ListGrants(ctx, webAcademy(t, ts).ID, "", false); len(grants) != before+1 {
				t.Fatalf("grants %d → %d", before, len(grants))
			}
		})

		t.Run("sign-in", func(t *testing.T) {
			p := webAnonymous(t, ts, origin)
			form, err := oauthtest.ParseForm(p.expect("/login", http.StatusOK).Body, "login-form")
			if err != nil {
				t.Fatal(err)
			}
			form.Values.Set("email", demo.OwnerEmail)
			form.Values.Set("password", demo.OwnerPassword)
			for name, hdr := range crossOriginHeaders(ts) {
				if res := coPost(t, p, "/login", form.Values, hdr...); res.Status != http.StatusForbidden {
					t.Fatalf("%s: sign-in %d; want 403", name, res.Status)
				}
				if res := p.get("/admin"); res.Status != http.StatusSeeOther {
					t.Fatalf("%s: signed in by a cross-origin form: /admin %d", name, res.Status)
				}
			}
			if res := coPost(t, p, "/login", form.Values, sameOrigin...); res.Status != http.StatusSeeOther {
				t.Fatalf("same-origin sign-in: %d\n%s", res.Status, webExcerpt(res.Body))
			}
			p.expect("/admin", http.StatusOK)
		})

		t.Run("sign-out", func(t *testing.T) {
			p := webSignIn(t, ts, origin, demo.StudentEmail, demo.StudentPassword)
			form := p.form("/logout", "logout-form", nil)
			for name, hdr := range crossOriginHeaders(ts) {
				if res := coPost(t, p, "/logout", form, hdr...); res.Status != http.StatusForbidden {
					t.Fatalf("%s: sign-out %d; want 403", name, res.Status)
				}
				p.expect("/account/connections", http.StatusOK) // still signed in
			}
			if res := coPost(t, p, "/logout", form, sameOrigin...); res.Status != http.StatusOK {
				t.Fatalf("same-origin sign-out: %d", res.Status)
			}
			p.expect("/account/connections", http.StatusSeeOther)
		})

		t.Run("admin area and account pages", func(t *testing.T) {
			owner := webSignIn(t, ts, origin, demo.OwnerEmail, demo.OwnerPassword)
			beta := owner.form("/admin/settings", "beta-form", nil) // turns the beta off
			for name, hdr := range crossOriginHeaders(ts) {
				res := coPost(t, owner, "/admin/settings/beta", beta, hdr...)
				if res.Status != http.StatusForbidden || !strings.Contains(res.Body, "Nothing was changed") {
					t.Fatalf("%s: admin form %d\n%s", name, res.Status, webExcerpt(res.Body))
				}
				if !webAcademy(t, ts).MCPConnectionsBeta {
					t.Fatalf("%s: a cross-origin form turned the beta off", name)
				}
			}
			student := webSignIn(t, ts, origin, demo.StudentEmail, demo.StudentPassword)
			revoke := url.Values{"csrf_token": {student.csrf()}, "confirm": {"yes"}, "client_id": {demo.MemberClientID}}
			for name, hdr := range crossOriginHeaders(ts) {
				if res := coPost(t, student, "/account/connections/revoke", revoke, hdr...); res.Status != http.StatusForbidden {
					t.Fatalf("%s: account form %d", name, res.Status)
				}
			}
			if res := coPost(t, owner, "/admin/settings/beta", beta, sameOrigin...); res.Status != http.StatusSeeOther || webAcademy(t, ts).MCPConnectionsBeta {
				t.Fatalf("same-origin admin form: %d", res.Status)
			}
		})
	})
}
