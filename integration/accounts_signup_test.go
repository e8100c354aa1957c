package integration

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lectern/lectern/authserver/scope"
	"github.com/lectern/lectern/internal/demo"
	"github.com/lectern/lectern/internal/oauthtest"
)

var signUpLinkRE = regexp.MustCompile(`href="(/signup\?auth_request=[^"]+)"`)

// Sign-up, once an operator turns it on: a person who meets the sign-in
// page of an app creates an account, confirms the address through the
// mailed link and lands back in the authorization they started. An address
// that has an account gets the same page and a "you already have an
// account" mail. Confirming on another device confirms, and signing in on
// the first continues.
func TestAccountsSignUp(t *testing.T) {
	ts, mp := accountServer(t, backend{name: "embedded"}, nil)
	academy := ts.academy()

	if p := browserAt(t, ts, academy).get("/signup"); p.Status != http.StatusNotFound {
		t.Fatalf("/signup while sign-up is off: %d", p.Status)
	}
	owner := webSignIn(t, ts, academy, demo.OwnerEmail, demo.OwnerPassword)
	if p := owner.submitForm(academy+"/admin/settings", "accounts-form", url.Values{"signup": {"on"}}); p.Status != http.StatusSeeOther {
		t.Fatalf("turning sign-up on: %d\n%s", p.Status, webExcerpt(p.Body))
	}
	eventually(t, 10*time.Second, func() error {
		if p := browserAt(t, ts, academy).get("/signup"); p.Status != http.StatusOK {
			return errStatus(p.Status)
		}
		return nil
	})
	if p := browserAt(t, ts, ts.open()).get("/signup"); p.Status != http.StatusNotFound {
		t.Fatalf("/signup at a site that did not turn it on: %d", p.Status)
	}

	// A person starts connecting an app and has no account.
	f := newFlow(t, ts, academy, demo.MemberClientID, scope.MemberDefault()...)
	person := browserAt(t, ts, academy)
	loginPage := followToLogin(t, person, f.authURL())
	m := signUpLinkRE.FindStringSubmatch(loginPage.Body)
	if m == nil {
		t.Fatalf("the sign-in page of an authorization has no sign-up link:\n%s", webExcerpt(loginPage.Body))
	}
	email := uniqueEmail("newcomer")
	sent := person.submitForm(academy+htmlUnescape(m[1]), "signup-form", url.Values{"name": {"Nia Newcomer"}, "email": {email}, "password": {"nia-password-1"}})
	if sent.Status != http.StatusOK || !strings.Contains(sent.Body, "We sent a message to "+email) {
		t.Fatalf("signing up: %d\n%s", sent.Status, webExcerpt(sent.Body))
	}
	// Not usable before the address is confirmed.
	g := newFlow(t, ts, academy, demo.MemberClientID, scope.MemberDefault()...)
	if out, err := g.browser.Authorize(g.authURL(), oauthtest.Options{Email: email, Password: "nia-password-1"}); err != nil || out.Page == nil || out.Page.Status != http.StatusUnauthorized {
		t.Fatalf("signing in before confirming: %v %+v", err, out)
	}

	verify := mailTo(t, mp, email, 1)
	if !strings.Contains(verify.Subject, "Confirm your e-mail address") {
		t.Fatalf("sign-up mail %q", verify.Subject)
	}
	link := linkIn(t, verify, "/signup/verify")
	// Opening the link (as a mail scanner would) uses nothing up.
	if p := browserAt(t, ts, academy).getURL(link); p.Status != http.StatusOK {
		t.Fatalf("opening the link: %d", p.Status)
	}
	done := person.submitForm(link, "confirm-form", nil)
	if done.Status != http.StatusSeeOther || !strings.HasPrefix(done.Header.Get("Location"), "/consent?auth_request=") {
		t.Fatalf("confirming in the browser that signed up: %d %s\n%s", done.Status, done.Header.Get("Location"), webExcerpt(done.Body))
	}
	out, err := person.b.Authorize(academy+done.Header.Get("Location"), oauthtest.Options{})
	if err != nil || out.Redirect == nil {
		t.Fatalf("continuing the authorization: %v %+v", err, out)
	}
	code, err := out.Code()
	if err != nil {
		t.Fatal(err)
	}
	if out.Redirect.Query().Get("state") != f.state {
		t.Fatal("the continued authorization lost its state")
	}
	tok, err := f.exchange(code)
	if err != nil {
		t.Fatal(err)
	}
	claims := decodeJWTClaims(t, tok.Extra("id_token").(string))
	if claims["email"] != email || claims["email_verified"] != true || claims["name"] != "Nia Newcomer" {
		t.Fatalf("id_token of the new account: %v", claims)
	}
	if p := person.getURL(link); p.Status != http.StatusGone {
		t.Fatalf("the used sign-up link: %d", p.Status)
	}

	// An address with an account: the same page, and a mail saying so.
	before, _ := mp.To(t.Context(), demo.StudentEmail)
	dup := browserAt(t, ts, academy).submitForm(academy+"/signup", "signup-form", url.Values{"name": {"Someone"}, "email": {demo.StudentEmail}, "password": {"whatever-pass"}})
	fresh := browserAt(t, ts, academy).submitForm(academy+"/signup", "signup-form", url.Values{"name": {"Someone"}, "email": {"fresh-" + email}, "password": {"whatever-pass"}})
	if dup.Status != fresh.Status || strings.ReplaceAll(pageText(dup.Body), demo.StudentEmail, "X") != strings.ReplaceAll(pageText(fresh.Body), "fresh-"+email, "X") {
		t.Fatalf("sign-up tells an existing address apart:\n%s\n---\n%s", pageText(dup.Body), pageText(fresh.Body))
	}
	exists := mailTo(t, mp, demo.StudentEmail, len(before)+1)
	if !strings.Contains(exists.Subject, "You already have an account") || !strings.Contains(exists.Text, "/password/forgot") {
		t.Fatalf("mail to an existing address: %q\n%s", exists.Subject, exists.Text)
	}

	// Confirming on another device confirms; signing in on the first
	// continues its authorization.
	h := newFlow(t, ts, academy, demo.MemberClientID, scope.MemberDefault()...)
	laptop := browserAt(t, ts, academy)
	lp := followToLogin(t, laptop, h.authURL())
	m = signUpLinkRE.FindStringSubmatch(lp.Body)
	second := uniqueEmail("two-devices")
	check := laptop.submitForm(academy+htmlUnescape(m[1]), "signup-form", url.Values{"name": {"Theo"}, "email": {second}, "password": {"theo-password-1"}})
	cont := regexp.MustCompile(`href="(/login\?auth_request=[^"]+)"`).FindStringSubmatch(check.Body)
	if cont == nil {
		t.Fatalf("the check-your-mail page has no way to continue:\n%s", webExcerpt(check.Body))
	}
	phone := browserAt(t, ts, academy)
	confirmed := phone.submitForm(linkIn(t, mailTo(t, mp, second, 1), "/signup/verify"), "confirm-form", nil)
	if confirmed.Status != http.StatusOK || !strings.Contains(confirmed.Body, "account is ready") {
		t.Fatalf("confirming on another device: %d\n%s", confirmed.Status, webExcerpt(confirmed.Body))
	}
	if p := phone.get("/account/connections"); p.Status != http.StatusSeeOther {
		t.Fatal("the other device was signed in by the link")
	}
	out, err = laptop.b.Authorize(academy+htmlUnescape(cont[1]), oauthtest.Options{Email: second, Password: "theo-password-1"})
	if err != nil || out.Redirect == nil || out.Redirect.Query().Get("state") != h.state {
		t.Fatalf("signing in on the first device after confirming elsewhere: %v %+v", err, out)
	}
}

func htmlUnescape(s string) string { return strings.ReplaceAll(s, "&amp;", "&") }

// followToLogin follows an authorization URL to the sign-in page.
func followToLogin(t *testing.T, p *webPerson, u string) *oauthtest.Page {
	t.Helper()
	for range 5 {
		page := p.getURL(u)
		if page.Status >= 300 && page.Status < 400 {
			loc, _ := page.URL.Parse(page.Header.Get("Location"))
			u = loc.String()
			continue
		}
		if !strings.Contains(page.Body, `id="login-form"`) {
			t.Fatalf("no sign-in page at %s:\n%s", u, webExcerpt(page.Body))
		}
		return page
	}
	t.Fatal("too many redirects")
	return nil
}
