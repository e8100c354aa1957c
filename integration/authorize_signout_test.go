package integration

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"github.com/lectern/lectern/internal/demo"
	"github.com/lectern/lectern/internal/oauthtest"
	"github.com/lectern/lectern/vocab"
)

// signOutByLink follows the link with id on page ("Sign in as someone
// else", "Not you?"), signs out on the page it leads to and returns where
// signing out sent the browser.
func signOutByLink(t *testing.T, b *oauthtest.Browser, page *oauthtest.Page, id string) *url.URL {
	t.Helper()
	href := linkHref(t, page.Body, id)
	link, err := page.URL.Parse(href)
	if err != nil {
		t.Fatal(err)
	}
	logout, err := b.Get(link.String())
	if err != nil {
		t.Fatal(err)
	}
	f, err := oauthtest.ParseForm(logout.Body, "logout-form")
	if err != nil {
		t.Fatalf("the link %s leads to no sign-out form: %v", href, err)
	}
	action, _ := logout.URL.Parse(f.Action)
	done, err := b.PostForm(action.String(), f.Values)
	if err != nil {
		t.Fatal(err)
	}
	if done.Status != http.StatusSeeOther {
		t.Fatalf("signing out from %s (return_to %q): %d; want 303 back to the authorization", href, f.Values.Get("return_to"), done.Status)
	}
	back, err := done.URL.Parse(done.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	return back
}

// linkHref is the href of the element with id, read as a browser reads
// the HTML (entities decoded).
func linkHref(t *testing.T, body, id string) string {
	t.Helper()
	i := strings.Index(body, `id="`+id+`"`)
	if i < 0 {
		t.Fatalf("no %q link on the page:\n%.600s", id, body)
	}
	rest := body[i:]
	j := strings.Index(rest, `href="`)
	if j < 0 {
		t.Fatalf("the %q link has no href", id)
	}
	rest = rest[j+len(`href="`):]
	return strings.ReplaceAll(rest[:strings.IndexByte(rest, '"')], "&amp;", "&")
}

// The refusal page's "Sign in as someone else" and the consent page's
// "Not you?" sign out and come back to the sign-in form of the same
// authorization request: signing in there as another person finishes it
// (its state and PKCE challenge), whichever page the link was on.
func TestAuthorizeSignInAsSomeoneElse(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	origin := ts.academy()
	student := oauthtest.Options{Email: demo.StudentEmail, Password: demo.StudentPassword}

	// finish signs in at the sign-in form back, which must be the form of
	// the same request, and exchanges the code.
	finish := func(t *testing.T, f *flow, back *url.URL, as oauthtest.Options) {
		t.Helper()
		if back.Path != "/login" || back.Query().Get("auth_request") == "" {
			t.Fatalf("signed out to %s; want the sign-in form of the authorization request", back)
		}
		out, err := f.browser.Authorize(origin+back.RequestURI(), oauthtest.Options{})
		if err != nil {
			t.Fatal(err)
		}
		form, err := oauthtest.ParseForm(out.Page.Body, "login-form")
		if err != nil || form.Values.Get("auth_request") != back.Query().Get("auth_request") {
			t.Fatalf("after signing out: %v; want the sign-in form for request %s", err, back.Query().Get("auth_request"))
		}
		out, err = f.browser.Authorize(origin+back.RequestURI(), as)
		if err != nil {
			t.Fatal(err)
		}
		code, err := out.Code()
		if err != nil {
			t.Fatal(err)
		}
		if out.Redirect.Query().Get("state") != f.state {
			t.Fatalf("state %q; want the request's %q", out.Redirect.Query().Get("state"), f.state)
		}
		tok, err := f.exchange(code)
		if err != nil {
			t.Fatalf("exchange with the request's verifier: %v", err)
		}
		if status, _, info := f.userinfo(tok.AccessToken); status != http.StatusOK || info["email"] != as.Email {
			t.Fatalf("userinfo: %d %v; want %s", status, info, as.Email)
		}
	}

	t.Run("refusal page answering the sign-in", func(t *testing.T) {
		f := newFlow(t, ts, origin, demo.MemberClientID, "openid", "email", "account:read")
		out, err := f.browser.Authorize(f.authURL(), oauthtest.Options{Email: demo.OutsiderEmail, Password: demo.OutsiderPassword})
		if err != nil {
			t.Fatal(err)
		}
		if out.Page == nil || out.Page.Status != http.StatusForbidden {
			t.Fatalf("want the refusal page; got %+v", out)
		}
		finish(t, f, signOutByLink(t, f.browser, out.Page, "sign-in-as-someone-else"), student)
	})
	t.Run("refusal page answering the authorization of a signed-in person", func(t *testing.T) {
		f := newFlow(t, ts, origin, demo.MemberClientID, "openid", "email", "account:read")
		if _, err := f.browser.Authorize(f.authURL(), oauthtest.Options{Email: demo.OutsiderEmail, Password: demo.OutsiderPassword}); err != nil {
			t.Fatal(err)
		}
		page, err := f.browser.Get(f.authURL()) // signed in: the refusal at once
		if err != nil {
			t.Fatal(err)
		}
		if page.Status != http.StatusForbidden {
			t.Fatalf("GET %s signed in as the outsider: %d; want the refusal page", vocab.AuthorizePath, page.Status)
		}
		finish(t, f, signOutByLink(t, f.browser, page, "sign-in-as-someone-else"), student)
	})
	t.Run("consent page", func(t *testing.T) {
		f := newFlow(t, ts, origin, demo.MemberClientID, "openid", "email", "account:read")
		person := webSignIn(t, ts, origin, demo.StudentEmail, demo.StudentPassword)
		f.browser = person.b
		// prompt=consent: the student approved this client above.
		page := person.untilConsent(t, origin, f.authURL(oauth2.SetAuthURLParam("prompt", "consent")))
		finish(t, f, signOutByLink(t, f.browser, page, "not-you"), oauthtest.Options{Email: demo.OwnerEmail, Password: demo.OwnerPassword})
	})
}
