package integration

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/lectern/lectern/internal/demo"
	"github.com/lectern/lectern/internal/oauthtest"
)

// The account forms (sign-up, forgotten password, reset, invitation,
// e-mail confirmation) trust the site's aliases as origins, as the sign-in
// form does (session.SameOrigin): a form posted at an alias, or naming the
// alias as its Origin, is taken; another site's is still refused (audit
// W, notes).
func TestAccountFormsAcceptTheSiteAliases(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	ctx := context.Background()
	s := webAcademy(t, ts)
	aliasHost := fmt.Sprintf("alias.localhost:%d", ts.port)
	alias := "http://" + aliasHost
	s.Aliases = append(s.Aliases, aliasHost)
	a := s.Accounts()
	a.SignUp = true
	s.SetAccounts(a)
	if err := ts.app.Platform.UpdateSite(ctx, s); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, func() error {
		if code, _, body := ts.get(t, alias, "/signup"); code != http.StatusOK || !strings.Contains(string(body), `id="signup-form"`) {
			return fmt.Errorf("GET %s/signup: %d", alias, code)
		}
		return nil
	})

	// refusedAsForeign: the wrapper's answer to a form from elsewhere.
	refusedAsForeign := func(res *oauthtest.Page) bool {
		return res.Status == http.StatusForbidden && strings.Contains(res.Body, "sent from another site")
	}
	post := func(at, path string, v url.Values, hdr ...string) *oauthtest.Page {
		t.Helper()
		p := browserAt(t, ts, at)
		f := p.form("/password/forgot", "forgot-form", nil) // the browser's form token
		for k, vs := range v {
			f[k] = vs
		}
		return coPost(t, p, path, f, hdr...)
	}
	forms := []struct {
		path string
		v    url.Values
		want int // the form's own answer, past the origin check
	}{
		{"/password/forgot", url.Values{"email": {uniqueEmail("alias")}}, http.StatusOK},
		{"/signup", url.Values{"name": {"Alias Person"}, "email": {uniqueEmail("alias")}, "password": {"short"}}, http.StatusUnprocessableEntity},
		{"/password/reset", url.Values{"token": {"not-a-token"}, "password": {"a-long-new-password-1"}}, 0},
		{"/invitations/accept", url.Values{"token": {"not-a-token"}}, 0},
		{"/email/confirm", url.Values{"token": {"not-a-token"}}, 0},
	}
	for _, c := range []struct {
		name string
		at   string
		hdr  []string
	}{
		{"at the alias, a current browser", alias, []string{"Origin", alias, "Sec-Fetch-Site", "same-origin"}},
		{"at the alias, Origin only", alias, []string{"Origin", alias}},
		{"at the origin, the alias's Origin only", ts.academy(), []string{"Origin", alias}},
	} {
		for _, f := range forms {
			res := post(c.at, f.path, f.v, c.hdr...)
			if refusedAsForeign(res) || res.Status == http.StatusForbidden || (f.want != 0 && res.Status != f.want) {
				t.Errorf("%s: POST %s: %d; want the form taken (%d)\n%s", c.name, f.path, res.Status, f.want, webExcerpt(res.Body))
			}
		}
	}
	// Another site is still another site, at the alias too.
	for _, hdr := range [][]string{
		{"Origin", "https://evil.example"},
		{"Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site"},
		{"Origin", ts.open(), "Sec-Fetch-Site", "same-site"},
	} {
		for _, f := range forms {
			if res := post(alias, f.path, f.v, hdr...); !refusedAsForeign(res) {
				t.Errorf("POST %s with %q: %d; want 403, sent from another site", f.path, hdr, res.Status)
			}
		}
	}
}

// The admin area's forms trust the site's aliases as origins too: a
// browser that sends Origin but no Sec-Fetch-Site, naming the alias, is
// not refused because the form was posted to the site's own host (audit
// W, notes: the area compared Origin with the request's Host only).
func TestAdminFormsAcceptTheSiteAliases(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	s := webAcademy(t, ts)
	aliasHost := fmt.Sprintf("alias.localhost:%d", ts.port)
	s.Aliases = append(s.Aliases, aliasHost)
	if err := ts.app.Platform.UpdateSite(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	owner := webSignIn(t, ts, ts.academy(), demo.OwnerEmail, demo.OwnerPassword)
	beta := owner.form("/admin/settings", "beta-form", nil) // turns the beta off
	if res := coPost(t, owner, "/admin/settings/beta", beta, "Origin", "https://evil.example"); res.Status != http.StatusForbidden || !webAcademy(t, ts).MCPConnectionsBeta {
		t.Fatalf("a foreign Origin: %d; want 403 and nothing changed", res.Status)
	}
	if res := coPost(t, owner, "/admin/settings/beta", beta, "Origin", "http://"+aliasHost); res.Status != http.StatusSeeOther || webAcademy(t, ts).MCPConnectionsBeta {
		t.Fatalf("the alias's Origin: %d; want the form taken\n%s", res.Status, webExcerpt(res.Body))
	}
}
