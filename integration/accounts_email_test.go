package integration

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/lectern/lectern/authserver/scope"
	"github.com/lectern/lectern/internal/demo"
	"github.com/lectern/lectern/internal/oauthtest"
)

// Changing the e-mail address needs the current password and takes effect
// only when the new address confirms it; the old address gets a notice.
func TestAccountsEmailChange(t *testing.T) {
	ts, mp := accountServer(t, backend{name: "embedded"}, nil)
	academy := ts.academy()
	old := uniqueEmail("mover")
	if _, err := ts.app.Platform.CreateUser(t.Context(), old, "Mo Mover", "", "mover-password-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.app.Platform.GrantRole(t.Context(), siteID(t, ts, academy), old, "student"); err != nil {
		t.Fatal(err)
	}
	p := webSignIn(t, ts, academy, old, "mover-password-1")
	page := p.expect("/account/email", http.StatusOK)
	if webTextByID(t, page.Body, "current-email") != old || webTextByID(t, page.Body, "email-status") != "verified" {
		t.Fatalf("the e-mail section:\n%s", webExcerpt(page.Body))
	}
	moved := uniqueEmail("moved")
	if r := p.submitForm(academy+"/account/email", "email-form", url.Values{"new_email": {moved}, "password": {"wrong-password"}}); r.Status != http.StatusUnauthorized {
		t.Fatalf("a change with a wrong password: %d", r.Status)
	}
	if r := p.submitForm(academy+"/account/email", "email-form", url.Values{"new_email": {demo.StudentEmail}, "password": {"mover-password-1"}}); r.Status != http.StatusSeeOther {
		t.Fatalf("a change to an address with an account answers differently: %d", r.Status)
	}
	if r := p.submitForm(academy+"/account/email", "email-form", url.Values{"new_email": {moved}, "password": {"mover-password-1"}}); r.Status != http.StatusSeeOther {
		t.Fatalf("requesting the change: %d\n%s", r.Status, webExcerpt(r.Body))
	}
	// Nothing changed yet.
	if got := webTextByID(t, p.expect("/account/email", http.StatusOK).Body, "current-email"); got != old {
		t.Fatalf("the address changed before it was confirmed: %s", got)
	}
	notice := mailTo(t, mp, old, 2) // one per request: the refused-looking one and this one
	if !strings.Contains(notice.Text, moved) {
		t.Fatalf("the notice to the old address:\n%s", notice.Text)
	}
	link := linkIn(t, mailTo(t, mp, moved, 1), "/email/confirm")
	if r := browserAt(t, ts, ts.open()).getURL(onOrigin(link, ts.open())); r.Status != http.StatusBadRequest {
		t.Fatalf("the link at another site: %d", r.Status)
	}
	// Confirmed from any browser: the link is the proof.
	if r := browserAt(t, ts, academy).submitForm(link, "confirm-form", nil); r.Status != http.StatusOK || !strings.Contains(r.Body, moved) {
		t.Fatalf("confirming: %d\n%s", r.Status, webExcerpt(r.Body))
	}
	if got := webTextByID(t, p.expect("/account/email", http.StatusOK).Body, "current-email"); got != moved {
		t.Fatalf("after confirming the address is %s", got)
	}
	tok := ts.memberToken(t, academy, moved, "mover-password-1")
	f := newFlow(t, ts, academy, demo.MemberClientID)
	if code, _, claims := f.userinfo(tok.AccessToken); code != http.StatusOK || claims["email"] != moved || claims["email_verified"] != true {
		t.Fatalf("userinfo after the change: %d %v", code, claims)
	}
	g := newFlow(t, ts, academy, demo.MemberClientID, scope.MemberDefault()...)
	if out, err := g.browser.Authorize(g.authURL(), oauthtest.Options{Email: old, Password: "mover-password-1"}); err != nil || out.Page == nil || out.Page.Status != http.StatusUnauthorized {
		t.Fatalf("the old address still signs in: %v %+v", err, out)
	}
	if r := browserAt(t, ts, academy).getURL(link); r.Status != http.StatusGone {
		t.Fatalf("the used link: %d", r.Status)
	}
}
