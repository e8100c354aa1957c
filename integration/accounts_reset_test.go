package integration

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"github.com/lectern/lectern/authserver/scope"
	"github.com/lectern/lectern/internal/demo"
	"github.com/lectern/lectern/vocab"
)

// A member who forgot their password asks for a link, the same way whether
// or not the address has an account; the link (valid once, 30 minutes, at
// its own site only) sets a new password, and that ends every browser
// session of the account at every site and every grant: old access and
// refresh tokens stop working at once.
func TestAccountsPasswordReset(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts, mp := accountServer(t, b, nil)
		academy, open := ts.academy(), ts.open()
		email := uniqueEmail("forgetful")
		if _, err := ts.app.Platform.CreateUser(t.Context(), email, "Fran Forgetful", "", "old-password-1"); err != nil {
			t.Fatal(err)
		}
		for _, origin := range []string{academy, open} {
			if _, err := ts.app.Platform.GrantRole(t.Context(), siteID(t, ts, origin), email, "student"); err != nil {
				t.Fatal(err)
			}
		}
		// Signed in at both sites, with an app connected at one.
		atAcademy := webSignIn(t, ts, academy, email, "old-password-1")
		atOpen := webSignIn(t, ts, open, email, "old-password-1")
		tok := ts.memberToken(t, academy, email, "old-password-1")
		f := newFlow(t, ts, academy, demo.MemberClientID)
		if code, _, _ := f.userinfo(tok.AccessToken); code != http.StatusOK {
			t.Fatalf("userinfo before the reset: %d", code)
		}

		// The sign-in page links the form.
		login := browserAt(t, ts, academy).expect("/login", http.StatusOK)
		if !strings.Contains(login.Body, `href="/password/forgot"`) {
			t.Fatal("the sign-in page has no \"Forgot your password?\" link")
		}

		// The same answer for an account and for no account.
		nobody := uniqueEmail("nobody")
		known := browserAt(t, ts, academy).submitForm(academy+"/password/forgot", "forgot-form", url.Values{"email": {email}})
		unknown := browserAt(t, ts, academy).submitForm(academy+"/password/forgot", "forgot-form", url.Values{"email": {nobody}})
		if known.Status != http.StatusOK || unknown.Status != http.StatusOK {
			t.Fatalf("forgot: %d and %d", known.Status, unknown.Status)
		}
		if a, b := strings.ReplaceAll(pageText(known.Body), email, "X"), strings.ReplaceAll(pageText(unknown.Body), nobody, "X"); a != b {
			t.Fatalf("the answers differ for an account and for none:\n%s\n---\n%s", a, b)
		}
		m := mailTo(t, mp, email, 1)
		noMailTo(t, mp, nobody, 0)
		if !strings.Contains(m.Subject, "Reset your password") || !strings.Contains(m.Text, "30 minutes") {
			t.Fatalf("reset mail %q:\n%s", m.Subject, m.Text)
		}
		link := linkIn(t, m, "/password/reset")

		// Whoever knows the old password asks to move the account to an
		// address of theirs; the reset must use that link up too.
		moved := uniqueEmail("mallory")
		if r := atAcademy.submitForm(academy+"/account/email", "email-form", url.Values{"new_email": {moved}, "password": {"old-password-1"}}); r.Status != http.StatusSeeOther {
			t.Fatalf("asking for an e-mail change: %d\n%s", r.Status, webExcerpt(r.Body))
		}
		change := linkIn(t, mailTo(t, mp, moved, 1), "/email/confirm")

		// Another site's origin: not valid there.
		if p := browserAt(t, ts, open).getURL(onOrigin(link, open)); p.Status != http.StatusBadRequest {
			t.Fatalf("the reset link at another site: %d", p.Status)
		}
		// A tampered token: not valid.
		if p := browserAt(t, ts, academy).getURL(academy + "/password/reset?token=" + strings.Repeat("A", 43)); p.Status != http.StatusBadRequest {
			t.Fatalf("a made-up token: %d", p.Status)
		}

		person := browserAt(t, ts, academy)
		if p := person.submitForm(link, "reset-form", url.Values{"password": {"new-password-1"}, "password2": {"new-password-2"}}); p.Status != http.StatusUnprocessableEntity {
			t.Fatalf("mismatched passwords: %d", p.Status)
		}
		// A form without its CSRF token changes nothing.
		if p := person.post("/password/reset", url.Values{"token": {mustURL(link).Query().Get("token")}, "password": {"x-password-1"}, "password2": {"x-password-1"}}); p.Status != http.StatusForbidden {
			t.Fatalf("a reset without the CSRF token: %d", p.Status)
		}
		done := person.submitForm(link, "reset-form", url.Values{"password": {"new-password-1"}, "password2": {"new-password-1"}})
		if done.Status != http.StatusOK || !strings.Contains(done.Body, "Your password was changed") {
			t.Fatalf("resetting: %d\n%s", done.Status, webExcerpt(done.Body))
		}
		if p := person.getURL(link); p.Status != http.StatusGone {
			t.Fatalf("the used link: %d", p.Status)
		}
		if p := browserAt(t, ts, academy).getURL(change); p.Status != http.StatusGone {
			t.Fatalf("an e-mail change asked for before the reset, after it: %d\n%s", p.Status, webExcerpt(p.Body))
		}

		// Every session at every site has ended.
		for name, p := range map[string]*webPerson{"academy": atAcademy, "open school": atOpen} {
			if page := p.get("/account/connections"); page.Status != http.StatusSeeOther || !strings.HasPrefix(page.Header.Get("Location"), "/login") {
				t.Errorf("the session at %s survived the reset: %d", name, page.Status)
			}
		}
		// The grant is revoked: access and refresh tokens are refused.
		if code, _, _ := f.userinfo(tok.AccessToken); code != http.StatusUnauthorized {
			t.Fatalf("the old access token after the reset: %d", code)
		}
		ctx := f.ctx
		if _, err := f.conf.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token(); oauthErrorCode(err) != "invalid_grant" {
			t.Fatalf("the old refresh token after the reset: %v", err)
		}
		// The old password is gone, the new one works.
		g := newFlow(t, ts, academy, demo.MemberClientID, scope.MemberDefault()...)
		if out, err := g.browser.Authorize(g.authURL(), oauthtestOptions(email, "old-password-1")); err != nil || out.Redirect != nil || out.Page == nil || out.Page.Status != http.StatusUnauthorized {
			t.Fatalf("the old password after the reset: %v %+v", err, out)
		}
		ts.memberToken(t, academy, email, "new-password-1")

		// Rate limits: five reset mails an hour per address, whoever asks.
		spam := uniqueEmail("spammed")
		var last *webPerson
		for i := 0; i < 6; i++ {
			last = browserAt(t, ts, academy)
			p := last.submitForm(academy+"/password/forgot", "forgot-form", url.Values{"email": {spam}})
			want := http.StatusOK
			if i == 5 {
				want = http.StatusTooManyRequests
			}
			if p.Status != want {
				t.Fatalf("reset request %d for one address: %d, want %d", i+1, p.Status, want)
			}
		}
		_ = vocab.UserInfoPath
	})
}
