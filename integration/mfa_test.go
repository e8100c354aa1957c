package integration

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/pquerna/otp/totp"
	"golang.org/x/oauth2"

	"github.com/lectern/lectern/internal/demo"
	"github.com/lectern/lectern/internal/oauthtest"
)

var (
	totpSecretRE   = regexp.MustCompile(`id="totp-secret">([A-Z2-7]+)<`)
	recoveryCodeRE = regexp.MustCompile(`<code>([a-z2-7]{5}-[a-z2-7]{5})</code>`)
)

// enrolTOTP sets up (or replaces) the authenticator app of the signed-in
// person p on the account page, as a person would: the current password
// typed on the start form, the secret from the page, a wrong code refused,
// the app's code accepted. It returns the secret and the recovery codes
// shown once.
func enrolTOTP(t *testing.T, p *webPerson, password string) (secret string, codes []string) {
	t.Helper()
	start := p.expectPost("/account/security/totp", url.Values{"csrf_token": {p.csrf()}, "password": {password}}, http.StatusOK)
	m := totpSecretRE.FindStringSubmatch(start.Body)
	if m == nil {
		t.Fatalf("no secret on the enrolment page:\n%s", webExcerpt(start.Body))
	}
	secret = m[1]
	qr := p.expect("/account/security/totp/qr.png", http.StatusOK)
	if ct := qr.Header.Get("Content-Type"); ct != "image/png" || !strings.HasPrefix(qr.Body, "\x89PNG") {
		t.Fatalf("the QR code is %q, %d bytes; want a PNG", ct, len(qr.Body))
	}
	f, err := oauthtest.ParseForm(start.Body, "totp-confirm-form")
	if err != nil {
		t.Fatal(err)
	}
	good := totpCode(t, secret, time.Now())
	n, _ := strconv.Atoi(good)
	f.Values.Set("code", fmt.Sprintf("%06d", (n+1)%1000000))
	if res := p.post("/account/security/totp/confirm", f.Values); res.Status != http.StatusUnprocessableEntity || !strings.Contains(res.Body, "That code is not right") {
		t.Fatalf("a wrong first code: %d\n%s", res.Status, webExcerpt(res.Body))
	}
	f.Values.Set("code", good)
	done := p.expectPost("/account/security/totp/confirm", f.Values, http.StatusOK)
	for _, m := range recoveryCodeRE.FindAllStringSubmatch(done.Body, -1) {
		codes = append(codes, m[1])
	}
	if len(codes) != 10 {
		t.Fatalf("%d recovery codes shown; want 10:\n%s", len(codes), webExcerpt(done.Body))
	}
	page := p.expect("/account/security", http.StatusOK)
	if !strings.Contains(page.Body, `id="recovery-left">10<`) || !strings.Contains(page.Body, "totp-disable-form") {
		t.Fatalf("after enrolment the security page does not show the app on with 10 codes:\n%s", webExcerpt(page.Body))
	}
	return secret, codes
}

func totpCode(t *testing.T, secret string, at time.Time) string {
	t.Helper()
	c, err := totp.GenerateCode(secret, at)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// verifiedClaims verifies a token response's id_token with go-oidc and
// returns its claims.
func verifiedClaims(t *testing.T, ts *testServer, origin, clientID, rawID string) map[string]any {
	t.Helper()
	ctx := oidc.ClientContext(context.Background(), ts.client)
	provider, err := oidc.NewProvider(ctx, origin)
	if err != nil {
		t.Fatal(err)
	}
	idt, err := provider.Verifier(&oidc.Config{ClientID: clientID, SupportedSigningAlgs: []string{"ES256"}}).Verify(ctx, rawID)
	if err != nil {
		t.Fatalf("go-oidc: %v", err)
	}
	var claims map[string]any
	if err := idt.Claims(&claims); err != nil {
		t.Fatal(err)
	}
	return claims
}

func amrOf(claims map[string]any) []string {
	var out []string
	list, _ := claims["amr"].([]any)
	for _, v := range list {
		s, _ := v.(string)
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// checkAuthTime fails unless the id_token's auth_time is between before
// and now (a second's rounding either way).
func checkAuthTime(t *testing.T, claims map[string]any, before time.Time) {
	t.Helper()
	at, _ := claims["auth_time"].(float64)
	if got := time.Unix(int64(at), 0); got.Before(before.Add(-time.Second)) || got.After(time.Now().Add(time.Second)) {
		t.Errorf("auth_time %v; want the sign-in just now (after %v)", got, before)
	}
}

// TOTP as a member lives it: enrolment on the account page, then every
// sign-in asks for the app's code after the password; the id_token says so
// (amr pwd+otp+mfa, verified with go-oidc). A code is accepted once, a
// recovery code once, and wrong codes are limited.
func TestTOTPSecondFactor(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, nil)
		academy := ts.academy()

		// Without a factor, a sign-in is a password alone.
		f := newFlow(t, ts, academy, demo.MemberClientID, "openid", "profile", "email")
		tok, err := f.exchange(f.authorize(demo.StudentEmail, demo.StudentPassword))
		if err != nil {
			t.Fatal(err)
		}
		if got := amrOf(verifiedClaims(t, ts, academy, demo.MemberClientID, tok.Extra("id_token").(string))); !slices.Equal(got, []string{"pwd"}) {
			t.Fatalf("amr of a password sign-in = %v; want [pwd]", got)
		}

		p := webSignIn(t, ts, academy, demo.StudentEmail, demo.StudentPassword)
		secret, recovery := enrolTOTP(t, p, demo.StudentPassword)

		signIn := func(code string) *oauthtest.Outcome {
			t.Helper()
			f = newFlow(t, ts, academy, demo.MemberClientID, "openid", "profile", "email")
			out, err := f.browser.Authorize(f.authURL(), oauthtest.Options{Email: demo.StudentEmail, Password: demo.StudentPassword,
				Code: func() string { return code }})
			if err != nil {
				t.Fatal(err)
			}
			return out
		}
		// The next time step's code (phones run a little ahead): within
		// the accepted skew, and later than the enrolment's.
		next := totpCode(t, secret, time.Now().Add(30*time.Second))
		before := time.Now()
		out := signIn(next)
		code, err := out.Code()
		if err != nil {
			t.Fatalf("sign-in with the app's code: %v", err)
		}
		tok, err = f.exchange(code)
		if err != nil {
			t.Fatal(err)
		}
		claims := verifiedClaims(t, ts, academy, demo.MemberClientID, tok.Extra("id_token").(string))
		if got := amrOf(claims); !slices.Equal(got, []string{"mfa", "otp", "pwd"}) {
			t.Errorf("amr after password and code = %v; want mfa, otp, pwd", got)
		}
		checkAuthTime(t, claims, before)

		// The same code again: refused, on the factor page.
		out = signIn(next)
		if out.Page == nil || out.Page.Status != http.StatusUnauthorized || !strings.Contains(out.Page.Body, "That code is not right") {
			t.Fatalf("a reused code: %+v", out)
		}
		// A recovery code works once.
		if _, err := signIn(recovery[0]).Code(); err != nil {
			t.Fatalf("sign-in with a recovery code: %v", err)
		}
		if out := signIn(strings.ToUpper(recovery[0])); out.Page == nil || out.Page.Status != http.StatusUnauthorized {
			t.Fatalf("a used recovery code: %+v", out)
		}
		if page := p.expect("/account/security", http.StatusOK); !strings.Contains(page.Body, `id="recovery-left">9<`) {
			t.Errorf("after one recovery code the page does not say 9 are left")
		}
		// Wrong codes are limited: after 5 (two were counted above), even
		// the right code is refused for a while.
		for i := 0; i < 3; i++ {
			signIn("000000x")
		}
		out = signIn(totpCode(t, secret, time.Now().Add(30*time.Second)))
		if out.Page == nil || out.Page.Status != http.StatusTooManyRequests || out.Page.Header.Get("Retry-After") == "" {
			t.Fatalf("after 5 wrong codes: %+v", out)
		}
		// A sign-in that skips the factor page gets no session.
		anon := webAnonymous(t, ts, academy)
		lf := anon.form("/login", "login-form", url.Values{"email": {demo.StudentEmail}, "password": {demo.StudentPassword}})
		if res := anon.post("/login", lf); res.Status != http.StatusOK || !strings.Contains(res.Body, `id="factor-form"`) {
			t.Fatalf("password sign-in of an account with an app: %d, want the factor page", res.Status)
		}
		if res := anon.get("/account"); res.Status != http.StatusSeeOther {
			t.Fatalf("after the password alone /account answers %d; want the sign-in redirect", res.Status)
		}
		// The factor step belongs to the browser that gave the password.
		other := webAnonymous(t, ts, academy)
		m := regexp.MustCompile(`name="step" value="([^"]+)"`).FindStringSubmatch(anon.post("/login", lf).Body)
		if m == nil {
			t.Fatal("no step on the factor page")
		}
		of := other.form("/login", "login-form", nil)
		if res := other.post("/login/factor", url.Values{"csrf_token": of["csrf_token"], "step": {m[1]}, "code": {recovery[1]}}); res.Status != http.StatusBadRequest {
			t.Fatalf("another browser answering the step: %d, want 400", res.Status)
		}
	})
}

// The site setting "staff must use a second factor": staff without one are
// sent to enrol before the admin area and before authorizing an operator
// client, then continue; students are not affected; the admin API shows
// and sets it.
func TestStaffSecondFactor(t *testing.T) {
	ts, _ := accountServer(t, backend{name: "embedded"}, nil)
	academy := ts.academy()
	owner := webSignIn(t, ts, academy, demo.OwnerEmail, demo.OwnerPassword)
	v := owner.form("/admin/settings", "accounts-form", url.Values{"staff_mfa": {"on"}})
	owner.expectPost("/admin/settings/accounts", v, http.StatusSeeOther)

	res := owner.get("/admin/settings")
	loc := res.Header.Get("Location")
	if res.Status != http.StatusSeeOther || !strings.HasPrefix(loc, "/account/security?required=1&continue=%2Fadmin%2Fsettings") {
		t.Fatalf("the owner without a factor opening settings: %d to %q; want the enrolment page", res.Status, loc)
	}
	page := owner.expect(loc, http.StatusOK)
	if !strings.Contains(page.Body, `id="factor-required"`) || !strings.Contains(page.Body, `href="/admin/settings" id="continue-link"`) {
		t.Fatalf("the enrolment page does not explain or continue:\n%s", webExcerpt(page.Body))
	}
	enrolTOTP(t, owner, demo.OwnerPassword)
	page = owner.expect("/admin/settings", http.StatusOK)
	if !strings.Contains(page.Body, `id="staff-mfa" name="staff_mfa" value="on" checked`) {
		t.Fatal("the setting is not shown on")
	}
	// Students are not staff.
	webSignIn(t, ts, academy, demo.StudentEmail, demo.StudentPassword).expect("/account/security", http.StatusOK)

	// A lecturer authorizing an operator client is sent to enrol, then
	// continues to the consent page; the id_token says two factors.
	f := newFlow(t, ts, academy, demo.VendorClientID, "openid", "courses:read")
	out, err := f.browser.Authorize(f.authURL(), oauthtest.Options{Email: demo.LecturerEmail, Password: demo.LecturerPassword})
	if err != nil {
		t.Fatal(err)
	}
	if out.Page == nil || out.Page.URL.Path != "/account/security" || !strings.Contains(out.Page.Body, `id="factor-required"`) {
		t.Fatalf("a lecturer without a factor authorizing an operator client ended at %+v\n%s", out, webExcerpt(out.Page.Body))
	}
	lecturer := &webPerson{t: t, ts: ts, origin: academy, b: f.browser}
	cont := regexp.MustCompile(`href="([^"]+)" id="continue-link"`).FindStringSubmatch(out.Page.Body)
	if cont == nil || !strings.HasPrefix(cont[1], "/login/continue?auth_request=") {
		t.Fatalf("no continue link to the authorization:\n%s", webExcerpt(out.Page.Body))
	}
	enrolTOTP(t, lecturer, demo.LecturerPassword)
	out, err = f.browser.Authorize(academy+strings.ReplaceAll(cont[1], "&amp;", "&"), oauthtest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	code, err := out.Code()
	if err != nil {
		t.Fatalf("continuing after enrolment: %v", err)
	}
	tok, err := f.exchange(code)
	if err != nil {
		t.Fatal(err)
	}
	if got := amrOf(verifiedClaims(t, ts, academy, demo.VendorClientID, tok.Extra("id_token").(string))); !slices.Contains(got, "mfa") || !slices.Contains(got, "otp") {
		t.Errorf("amr of the operator authorization = %v; want otp and mfa", got)
	}
}

// The admin API shows and sets "staff must use a second factor"; a value
// of the wrong type is a problem, not a change; the admin area enforces
// what the API set.
func TestStaffSecondFactorAdminAPI(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, nil)
		c := admOwner(t, ts, ts.academy())
		accounts := func(m map[string]any) map[string]any { a, _ := m["accounts"].(map[string]any); return a }
		if got := accounts(c.do(http.MethodGet, "/school", nil, 200))["staffSecondFactor"]; got != false {
			t.Fatalf("staffSecondFactor before = %v; want false", got)
		}
		r := admDo(t, ts, http.MethodPatch, ts.academy(), "/school", c.tok, map[string]any{"accounts": map[string]any{"staffSecondFactor": "yes"}})
		if r.status != http.StatusBadRequest && r.status != http.StatusUnprocessableEntity {
			t.Fatalf("staffSecondFactor \"yes\": %d; want a problem", r.status)
		}
		if got := accounts(c.do(http.MethodGet, "/school", nil, 200))["staffSecondFactor"]; got != false {
			t.Fatalf("a refused change changed staffSecondFactor to %v", got)
		}
		if got := accounts(c.do(http.MethodPatch, "/school", map[string]any{"accounts": map[string]any{"staffSecondFactor": true}}, 200))["staffSecondFactor"]; got != true {
			t.Fatalf("after setting it staffSecondFactor = %v", got)
		}
		// Other account settings are kept.
		if a := accounts(c.do(http.MethodGet, "/school", nil, 200)); a["staffSecondFactor"] != true || a["signUp"] != false {
			t.Fatalf("accounts after the change: %v", a)
		}
		lecturer := webSignIn(t, ts, ts.academy(), demo.LecturerEmail, demo.LecturerPassword)
		if res := lecturer.get("/admin"); res.Status != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/account/security?required=1") {
			t.Fatalf("a lecturer without a factor opening /admin: %d %q", res.Status, res.Header.Get("Location"))
		}
		// An application asking without interaction gets
		// interaction_required, not a code for a one-factor session.
		f := newFlow(t, ts, ts.academy(), demo.VendorClientID, "openid", "courses:read")
		res := lecturer.getURL(f.authURL(oauth2.SetAuthURLParam("prompt", "none")))
		loc, _ := url.Parse(res.Header.Get("Location"))
		if res.Status != http.StatusFound || loc == nil || loc.Query().Get("error") != "interaction_required" || loc.Query().Get("code") != "" {
			t.Fatalf("prompt=none for a staff session without a second factor: %d to %q", res.Status, res.Header.Get("Location"))
		}
		// The open school is another site: its setting is its own.
		if res := webSignIn(t, ts, ts.open(), demo.OwnerEmail, demo.OwnerPassword).get("/admin"); res.Status != http.StatusOK {
			t.Fatalf("the owner at the open school: %d; its setting is off", res.Status)
		}
	})
}

// The sign-in's second-factor and passkey forms refuse what did not come
// from the site's own pages, and a passkey ceremony answers once, at its
// own site.
func TestSecondFactorFormsRefuseForgery(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	academy := ts.academy()
	p := webAnonymous(t, ts, academy)
	lf := p.form("/login", "login-form", nil)
	csrf := lf.Get("csrf_token")
	for _, path := range []string{"/login/factor", "/login/passkey/begin", "/login/passkey/finish"} {
		if st := p.post(path, url.Values{"step": {"x"}}).Status; st != http.StatusForbidden {
			t.Errorf("POST %s without the token: %d; want 403", path, st)
		}
		if st := postFrom(t, p, path, "http://evil.test", url.Values{"csrf_token": {csrf}}); st != http.StatusForbidden {
			t.Errorf("POST %s from another origin: %d; want 403", path, st)
		}
		if st := postFrom(t, p, path, ts.open(), url.Values{"csrf_token": {csrf}}); st != http.StatusForbidden {
			t.Errorf("POST %s from a sibling site's origin: %d; want 403", path, st)
		}
		if st := p.get(path).Status; st != http.StatusMethodNotAllowed {
			t.Errorf("GET %s: %d; want 405", path, st)
		}
	}
	if res := p.post("/login/factor", url.Values{"csrf_token": {csrf}, "step": {strings.Repeat("a", 43)}, "code": {"123456"}}); res.Status != http.StatusBadRequest {
		t.Errorf("an unknown step: %d; want 400", res.Status)
	}
	begin := p.post("/login/passkey/begin", url.Values{"csrf_token": {csrf}})
	m := regexp.MustCompile(`"ceremony":"([^"]+)"`).FindStringSubmatch(begin.Body)
	if begin.Status != http.StatusOK || m == nil || !strings.Contains(begin.Body, `"rpId":"localhost"`) {
		t.Fatalf("passkey begin: %d %s", begin.Status, begin.Body)
	}
	// A made-up answer is refused, and uses the ceremony up.
	if res := p.post("/login/passkey/finish", url.Values{"csrf_token": {csrf}, "ceremony": {m[1]}, "credential": {`{"id":"x"}`}}); res.Status != http.StatusUnauthorized {
		t.Errorf("a forged passkey answer: %d; want 401", res.Status)
	}
	if res := p.post("/login/passkey/finish", url.Values{"csrf_token": {csrf}, "ceremony": {m[1]}, "credential": {`{"id":"x"}`}}); res.Status != http.StatusBadRequest {
		t.Errorf("a used ceremony: %d; want 400", res.Status)
	}
	if res := p.get("/account"); res.Status != http.StatusSeeOther {
		t.Errorf("after forged answers /account: %d; want the sign-in redirect", res.Status)
	}
	// Starting ceremonies is limited per address: they hold cache entries.
	limited := false
	for range 40 {
		res := p.post("/login/passkey/begin", url.Values{"csrf_token": {csrf}})
		if res.Status == http.StatusTooManyRequests {
			limited = res.Header.Get("Retry-After") != ""
			break
		}
	}
	if !limited {
		t.Error("40 passkey sign-ins started from one address in a moment were all admitted")
	}
	// Open School is on an IP address: no relying party, no passkeys.
	o := webAnonymous(t, ts, ts.open())
	of := o.form("/login", "login-form", nil)
	if strings.Contains(o.get("/login").Body, "passkey-signin") {
		t.Error("the open school's sign-in page offers passkeys")
	}
	if st := o.post("/login/passkey/begin", url.Values{"csrf_token": of["csrf_token"]}).Status; st != http.StatusNotFound {
		t.Errorf("passkey begin at an IP origin: %d; want 404", st)
	}
}

// A mailed link with a password is one factor: a person with an
// authenticator app who accepts an invitation by signing in is sent to the
// sign-in page, which asks for the app's code, and only then has a
// session.
func TestInvitationDoesNotSkipTheSecondFactor(t *testing.T) {
	ts, mp := accountServer(t, backend{name: "embedded"}, nil)
	academy := ts.academy()
	token := admOwnerToken(t, ts, academy, "members:read", "members:write")
	email := uniqueEmail("guarded")
	admDo(t, ts, "POST", academy, "/members", token, map[string]any{"email": email, "role": "lecturer"}).want(t, http.StatusCreated, "invite")
	link := linkIn(t, mailTo(t, mp, email, 1), "/invitations/accept")
	if _, err := ts.app.Platform.CreateUser(t.Context(), email, "Gil", "", "gil-password-1"); err != nil {
		t.Fatal(err)
	}
	// Gil sets up an app (at the open school, where Gil has no role: the
	// app belongs to the account).
	gil := webSignIn(t, ts, ts.open(), email, "gil-password-1")
	secret, _ := enrolTOTP(t, gil, "gil-password-1")

	p := browserAt(t, ts, academy)
	res := p.submitForm(link, "invitation-form", url.Values{"password": {"gil-password-1"}})
	if res.Status != http.StatusSeeOther || res.Header.Get("Location") != "/login?return_to=%2Fadmin" {
		t.Fatalf("accepting with the password: %d to %q; want the sign-in page", res.Status, res.Header.Get("Location"))
	}
	if signedIn(t, p) {
		t.Fatal("a link and a password made a session for an account with an app")
	}
	lf := p.form("/login?return_to=%2Fadmin", "login-form", url.Values{"email": {email}, "password": {"gil-password-1"}})
	step := p.post("/login", lf)
	f, err := oauthtest.ParseForm(step.Body, "factor-form")
	if err != nil {
		t.Fatalf("no factor step after the password: %v", err)
	}
	f.Values.Set("code", totpCode(t, secret, time.Now().Add(30*time.Second)))
	if done := p.post("/login/factor", f.Values); done.Status != http.StatusSeeOther || done.Header.Get("Location") != "/admin" {
		t.Fatalf("the factor step: %d to %q; want /admin", done.Status, done.Header.Get("Location"))
	}
	p.expect("/admin", http.StatusOK)
}
