package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lectern/lectern/internal/oauthtest"
	"github.com/lectern/lectern/storage"
)

// Changing second factors takes more than a session cookie (audit W,
// finding 1; audit P, findings 2, 3 and 6): the tests of the rules in
// web/account_factors.go, and of the notices mailed for each change.

// stepUpMember is a new member of the academy with a password of their
// own (fresh throttles, and a mailbox no other test reads).
func stepUpMember(t *testing.T, ts *testServer, who string) (email, password string) {
	t.Helper()
	email, password = uniqueEmail(who), who+"-password-1"
	if _, err := ts.app.Platform.CreateUser(t.Context(), email, "Pat "+who, "", password); err != nil {
		t.Fatal(err)
	}
	return email, password
}

// passkeyBegin posts the passkey form's fields to the begin endpoint and
// returns the status and the JSON's error.
func passkeyBegin(t *testing.T, p *webPerson, password string) (int, string) {
	t.Helper()
	v := url.Values{"csrf_token": {p.csrf()}, "name": {"Thief key"}}
	if password != "" {
		v.Set("password", password)
	}
	res := p.post("/account/security/passkeys/begin", v)
	var a struct {
		Ceremony string `json:"ceremony"`
		Error    string `json:"error"`
	}
	if err := json.Unmarshal([]byte(res.Body), &a); err != nil {
		t.Fatalf("passkey begin: %d %s", res.Status, res.Body)
	}
	if res.Status == http.StatusOK && a.Ceremony == "" {
		t.Fatalf("passkey begin: 200 without a ceremony: %s", res.Body)
	}
	return res.Status, a.Error
}

// signInWithCode signs email in at origin in a new browser with the
// password and then code on the factor page, and returns the answer.
func signInWithCode(t *testing.T, ts *testServer, origin, email, password, code string) *oauthtest.Page {
	t.Helper()
	p := webAnonymous(t, ts, origin)
	step := p.post("/login", p.form("/login", "login-form", url.Values{"email": {email}, "password": {password}}))
	f, err := oauthtest.ParseForm(step.Body, "factor-form")
	if err != nil {
		t.Fatalf("no factor step after the password: %d\n%s", step.Status, webExcerpt(step.Body))
	}
	f.Values.Set("code", code)
	return p.post("/login/factor", f.Values)
}

// addFixturePasskey stores a passkey of email at site, as if registered
// there (its credential is never used to sign in here).
func addFixturePasskey(t *testing.T, ts *testServer, origin, email, name string) *storage.Passkey {
	t.Helper()
	u, err := ts.app.Store.UserByEmail(t.Context(), email)
	if err != nil {
		t.Fatal(err)
	}
	pk := &storage.Passkey{SiteID: siteID(t, ts, origin), UserID: u.ID, CredentialID: []byte("fixture-" + randomHex(8)), Name: name, Data: "{}", CreatedAt: time.Now()}
	if err := ts.app.Store.CreatePasskey(t.Context(), pk); err != nil {
		t.Fatal(err)
	}
	return pk
}

// A stolen session cookie does not set up an authenticator app or start a
// passkey: both ask for the current password, checked as a sign-in is.
// With the password, a session that has not proved the app it holds
// cannot replace it (a phished password and an old cookie): the owner's
// app keeps working. The owner, with the password and a session that
// proved the app, replaces and turns it off; each change is mailed. A
// code typed as apps show it ("123 456") signs in.
func TestFactorChangesNeedMoreThanTheSession(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts, mp := accountServer(t, b, nil)
		academy := ts.academy()
		email, pw := stepUpMember(t, ts, "stepup")
		thief := webSignIn(t, ts, academy, email, pw) // password only, before any factor
		owner := webSignIn(t, ts, academy, email, pw)

		// The cookie alone: no secret, no ceremony.
		res := thief.post("/account/security/totp", thief.form("/account/security", "totp-start-form", nil))
		if res.Status != http.StatusUnprocessableEntity || totpSecretRE.MatchString(res.Body) || !strings.Contains(res.Body, "Enter your current password.") {
			t.Fatalf("setting up an app without the password: %d\n%s", res.Status, webExcerpt(res.Body))
		}
		res = thief.post("/account/security/totp", thief.form("/account/security", "totp-start-form", url.Values{"password": {"not-the-password"}}))
		if res.Status != http.StatusUnauthorized || totpSecretRE.MatchString(res.Body) || !strings.Contains(res.Body, "Your current password is wrong.") {
			t.Fatalf("setting up an app with a wrong password: %d\n%s", res.Status, webExcerpt(res.Body))
		}
		if st, msg := passkeyBegin(t, thief, ""); st != http.StatusUnprocessableEntity || msg != "Enter your current password." {
			t.Fatalf("starting a passkey without the password: %d %q", st, msg)
		}
		if st, msg := passkeyBegin(t, thief, "not-the-password"); st != http.StatusUnauthorized || msg != "Your current password is wrong." {
			t.Fatalf("starting a passkey with a wrong password: %d %q", st, msg)
		}
		noMailTo(t, mp, email, 0)

		// The owner sets up the app: told by mail.
		secret, _ := enrolTOTP(t, owner, pw)
		m := mailTo(t, mp, email, 1)
		if m.Subject != "A second factor was added to your account at Demo Academy" || !strings.Contains(m.Text, "An authenticator app was set up for your account at Demo Academy") ||
			!strings.Contains(m.Text, academy+"/password/forgot") {
			t.Fatalf("the notice of a new app: %q\n%s", m.Subject, m.Text)
		}

		// The old one-factor session, even with the password, cannot
		// replace the app or add a passkey.
		res = thief.post("/account/security/totp", url.Values{"csrf_token": {thief.csrf()}, "password": {pw}})
		if res.Status != http.StatusForbidden || totpSecretRE.MatchString(res.Body) || !strings.Contains(res.Body, "first sign in again with your second factor") ||
			!strings.Contains(res.Body, `href="/login?return_to=%2Faccount%2Fsecurity"`) {
			t.Fatalf("replacing the app from a one-factor session: %d\n%s", res.Status, webExcerpt(res.Body))
		}
		if st, msg := passkeyBegin(t, thief, pw); st != http.StatusForbidden || !strings.Contains(msg, "first sign in again with your second factor") {
			t.Fatalf("starting a passkey from a one-factor session of an account with an app: %d %q", st, msg)
		}
		// The owner's app still signs in, its code typed as the app shows it.
		code := totpCode(t, secret, time.Now().Add(30*time.Second))
		if res := signInWithCode(t, ts, academy, email, pw, code[:3]+" "+code[3:]); res.Status != http.StatusSeeOther {
			t.Fatalf("the owner's app code typed as %q: %d\n%s", code[:3]+" "+code[3:], res.Status, webExcerpt(res.Body))
		}

		// The owner's session proved the app: with the password, it
		// replaces it, and the notice says so.
		enrolTOTP(t, owner, pw)
		if m := mailTo(t, mp, email, 2); !strings.Contains(m.Text, "It replaces the previous app") {
			t.Fatalf("the notice of a replaced app: %q\n%s", m.Subject, m.Text)
		}
		if m := owner.get("/account/security"); strings.Contains(m.Body, `id="factor-proof"`) {
			t.Errorf("a session that proved the app is told to sign in again:\n%s", webExcerpt(m.Body))
		}
		if page := thief.get("/account/security"); !strings.Contains(page.Body, `id="factor-proof"`) {
			t.Errorf("a one-factor session of an account with an app is not told to sign in again")
		}
	})
}

// Passkeys work only at their own site, so elsewhere the password alone
// signs in. That session must not set up an app, which works at every
// site (audit P, finding 2): the account has a second factor, and the
// session has not proved it.
func TestFactorSetupElsewhereNeedsTheFactor(t *testing.T) {
	ts, mp := accountServer(t, backend{name: "embedded"}, nil)
	academy, open := ts.academy(), ts.open()
	email, pw := stepUpMember(t, ts, "xsite")
	addFixturePasskey(t, ts, academy, email, "Academy key")

	// At the academy the password is not enough to sign in.
	p := webAnonymous(t, ts, academy)
	if step := p.post("/login", p.form("/login", "login-form", url.Values{"email": {email}, "password": {pw}})); !strings.Contains(step.Body, `id="factor-passkey"`) {
		t.Fatalf("a password sign-in at the academy of an account with a passkey there: %d, no factor step", step.Status)
	}
	// At the open school it is, but the session changes no factors.
	other := webSignIn(t, ts, open, email, pw)
	if page := other.expect("/account/security", http.StatusOK); !strings.Contains(page.Body, "Your account has a passkey at another site") {
		t.Errorf("the open school's security page does not say why factors cannot be changed here:\n%s", webExcerpt(page.Body))
	}
	res := other.post("/account/security/totp", other.form("/account/security", "totp-start-form", url.Values{"password": {pw}}))
	if res.Status != http.StatusForbidden || totpSecretRE.MatchString(res.Body) || !strings.Contains(res.Body, "Your account has a passkey at another site") {
		t.Fatalf("setting up an app at another site with the password alone: %d\n%s", res.Status, webExcerpt(res.Body))
	}
	u, err := ts.app.Store.UserByEmail(t.Context(), email)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ts.app.Store.TOTPOf(t.Context(), u.ID); err == nil {
		t.Fatal("an app was set up")
	}
	noMailTo(t, mp, email, 0)
}

// Removing a passkey takes a session that proved a factor; the one that
// did removes it, and the owner is told (audit P, finding 3).
func TestPasskeyRemovalNeedsTheFactor(t *testing.T) {
	ts, mp := accountServer(t, backend{name: "embedded"}, nil)
	academy := ts.academy()
	email, pw := stepUpMember(t, ts, "remove")
	old := webSignIn(t, ts, academy, email, pw)
	owner := webSignIn(t, ts, academy, email, pw)
	_, recovery := enrolTOTP(t, owner, pw) // owner's session now proved the app
	mailTo(t, mp, email, 1)
	pk := addFixturePasskey(t, ts, academy, email, "Phone")
	id := strconv.FormatInt(pk.ID, 10)

	res := old.post("/account/security/passkeys/"+id+"/remove", url.Values{"csrf_token": {old.csrf()}})
	if res.Status != http.StatusForbidden || !strings.Contains(res.Body, `id="passkey-error"`) || !strings.Contains(res.Body, "first sign in again with your second factor") {
		t.Fatalf("removing a passkey from a one-factor session: %d\n%s", res.Status, webExcerpt(res.Body))
	}
	if res := old.post("/account/security/passkeys/999999/remove", url.Values{"csrf_token": {old.csrf()}}); res.Status != http.StatusNotFound {
		t.Errorf("removing an unknown passkey: %d; want 404", res.Status)
	}
	if keys, _ := ts.app.Store.Passkeys(context.Background(), pk.SiteID, pk.UserID); len(keys) != 1 {
		t.Fatalf("after the refusal %d passkeys; want the Phone kept", len(keys))
	}
	// The page's link signs in again with the second factor, and comes
	// back to the page, which now removes the passkey.
	if !strings.Contains(res.Body, `href="/login?return_to=%2Faccount%2Fsecurity"`) {
		t.Fatalf("the refusal does not link to signing in again:\n%s", webExcerpt(res.Body))
	}
	u, _ := ts.app.Store.UserByEmail(t.Context(), email)
	app, err := ts.app.Store.TOTPOf(t.Context(), u.ID)
	if err != nil {
		t.Fatal(err)
	}
	step := old.post("/login", old.form("/login?return_to=%2Faccount%2Fsecurity", "login-form", url.Values{"email": {email}, "password": {pw}}))
	f, err := oauthtest.ParseForm(step.Body, "factor-form")
	if err != nil {
		t.Fatalf("signing in again: no factor step: %d\n%s", step.Status, webExcerpt(step.Body))
	}
	f.Values.Set("code", totpCode(t, app.Secret, time.Now().Add(30*time.Second)))
	if res := old.post("/login/factor", f.Values); res.Status != http.StatusSeeOther || res.Header.Get("Location") != "/account/security" {
		t.Fatalf("signing in again with the app: %d to %q", res.Status, res.Header.Get("Location"))
	}
	old.expectPost("/account/security/passkeys/"+id+"/remove", url.Values{"csrf_token": {old.csrf()}}, http.StatusSeeOther)
	if keys, _ := ts.app.Store.Passkeys(context.Background(), pk.SiteID, pk.UserID); len(keys) != 0 {
		t.Fatalf("after removing it %d passkeys", len(keys))
	}
	m := mailTo(t, mp, email, 2)
	if m.Subject != "A second factor was removed from your account at Demo Academy" || !strings.Contains(m.Text, "The passkey named “Phone” was removed") {
		t.Fatalf("the notice of a removed passkey: %q\n%s", m.Subject, m.Text)
	}
	// Turning the app off (with a code) is told too.
	v := owner.form("/account/security", "totp-disable-form", url.Values{"code": {recovery[0]}})
	owner.expectPost("/account/security/totp/disable", v, http.StatusSeeOther)
	if m := mailTo(t, mp, email, 3); !strings.Contains(m.Text, "was turned off") {
		t.Fatalf("the notice of the app turned off: %q\n%s", m.Subject, m.Text)
	}
}

// The notices share the per-address mail limit: one that is held back is
// skipped, and the change is made all the same.
func TestFactorNoticesAreLimited(t *testing.T) {
	ts, mp := accountServer(t, backend{name: "embedded"}, nil)
	academy := ts.academy()
	email, pw := stepUpMember(t, ts, "limited")
	owner := webSignIn(t, ts, academy, email, pw)
	enrolTOTP(t, owner, pw)
	for i := range 6 {
		pk := addFixturePasskey(t, ts, academy, email, fmt.Sprintf("Key %d", i))
		owner.expectPost("/account/security/passkeys/"+strconv.FormatInt(pk.ID, 10)+"/remove", url.Values{"csrf_token": {owner.csrf()}}, http.StatusSeeOther)
	}
	mailTo(t, mp, email, 5)
	noMailTo(t, mp, email, 5)
	u, _ := ts.app.Store.UserByEmail(t.Context(), email)
	if keys, _ := ts.app.Store.Passkeys(context.Background(), siteID(t, ts, academy), u.ID); len(keys) != 0 {
		t.Errorf("%d passkeys left; every removal must be made", len(keys))
	}
}
