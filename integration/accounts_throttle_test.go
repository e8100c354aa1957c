package integration

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/lectern/lectern/internal/oauthtest"
)

// webSignInFrom signs email in at origin from ip (a loopback address of
// its own, so the throttle's per-IP counters are this test's).
func webSignInFrom(t *testing.T, ts *testServer, origin, ip, email, password string) *webPerson {
	t.Helper()
	b, v := signInForm(t, ts, origin, ip, email, password)
	res, err := b.PostForm(origin+"/login", v)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != http.StatusSeeOther {
		t.Fatalf("sign-in of %s: status %d\n%s", email, res.Status, webExcerpt(res.Body))
	}
	return &webPerson{t: t, ts: ts, origin: origin, b: b}
}

// The current password of the e-mail change is checked as a sign-in is: a
// stolen session cookie does not buy unlimited guesses. Ten wrong
// passwords there and the eleventh attempt, even with the right password,
// is refused with 429 and Retry-After, as is a sign-in from that address;
// wrong passwords at the form and at sign-in count together.
func TestAccountsEmailChangePasswordThrottled(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	academy := ts.academy()
	newMember := func(who string) (string, string) {
		email, pw := uniqueEmail(who), who+"-password-1"
		if _, err := ts.app.Platform.CreateUser(t.Context(), email, "Pat "+who, "", pw); err != nil {
			t.Fatal(err)
		}
		if _, err := ts.app.Platform.GrantRole(t.Context(), siteID(t, ts, academy), email, "student"); err != nil {
			t.Fatal(err)
		}
		return email, pw
	}
	change := func(p *webPerson, pw string) *oauthtest.Page {
		return p.submitForm(academy+"/account/email", "email-form", url.Values{"new_email": {uniqueEmail("new")}, "password": {pw}})
	}

	// Ten wrong passwords at the form, then the right one.
	email, pw := newMember("guessed")
	ip := nextSourceIP()
	p := webSignInFrom(t, ts, academy, ip, email, pw)
	for i := range 10 {
		if r := change(p, "guess-"+strconv.Itoa(i)); r.Status != http.StatusUnauthorized {
			t.Fatalf("wrong password %d at the e-mail form: %d\n%s", i+1, r.Status, webExcerpt(r.Body))
		}
	}
	r := change(p, pw)
	if r.Status != http.StatusTooManyRequests || r.Header.Get("Retry-After") == "" {
		t.Fatalf("the right password after ten wrong ones: %d, Retry-After %q; want 429\n%s", r.Status, r.Header.Get("Retry-After"), webExcerpt(r.Body))
	}
	if !strings.Contains(r.Body, "Too many failed sign-in attempts") {
		t.Fatalf("the refusal does not say why:\n%s", webExcerpt(r.Body))
	}
	if s := signInFrom(t, ts, academy, ip, email, pw); s.Status != http.StatusTooManyRequests {
		t.Fatalf("sign-in from the guessing address after the form's failures: %d, want 429", s.Status)
	}
	if s := signInFrom(t, ts, academy, nextSourceIP(), email, pw); s.Status != http.StatusSeeOther {
		t.Fatalf("the owner from another address: %d, want 303 (never a lockout)", s.Status)
	}

	// Five at the form and five at sign-in make ten.
	email, pw = newMember("mixed")
	ip = nextSourceIP()
	p = webSignInFrom(t, ts, academy, ip, email, pw)
	for i := range 5 {
		if r := change(p, "guess-"+strconv.Itoa(i)); r.Status != http.StatusUnauthorized {
			t.Fatalf("wrong password %d at the e-mail form: %d", i+1, r.Status)
		}
		if s := signInFrom(t, ts, ts.open(), ip, email, "other-guess-"+strconv.Itoa(i)); s.Status != http.StatusUnauthorized {
			t.Fatalf("wrong password %d at sign-in: %d", i+1, s.Status)
		}
	}
	if r := change(p, pw); r.Status != http.StatusTooManyRequests {
		t.Fatalf("the form after five failures there and five at sign-in: %d, want 429", r.Status)
	}
	if n := auditCount(t, ts, "demo-academy", "login.throttled"); n < 1 {
		t.Errorf("login.throttled events at Demo Academy: %d, want the refusals audited", n)
	}
}

// An invitation accepted by signing in checks the password as a sign-in
// does: after ten wrong passwords at sign-in from one address, the right
// one at the invitation is refused with 429 from there too.
func TestAccountsInvitationSignInThrottled(t *testing.T) {
	ts, mp := accountServer(t, backend{name: "embedded"}, nil)
	academy := ts.academy()
	token := admOwnerToken(t, ts, academy, "members:read", "members:write")
	email := uniqueEmail("invited")
	admDo(t, ts, "POST", academy, "/members", token, map[string]any{"email": email, "role": "student"}).want(t, http.StatusCreated, "invite")
	link := linkIn(t, mailTo(t, mp, email, 1), "/invitations/accept")
	if _, err := ts.app.Platform.CreateUser(t.Context(), email, "Ina", "", "ina-password-1"); err != nil {
		t.Fatal(err)
	}
	ip := nextSourceIP()
	for i := range 10 {
		if s := signInFrom(t, ts, academy, ip, email, "guess-"+strconv.Itoa(i)); s.Status != http.StatusUnauthorized {
			t.Fatalf("wrong password %d at sign-in: %d", i+1, s.Status)
		}
	}
	p := &webPerson{t: t, ts: ts, origin: academy, b: browserFromIP(ts, ip)}
	r := p.submitForm(link, "invitation-form", url.Values{"password": {"ina-password-1"}})
	if r.Status != http.StatusTooManyRequests || r.Header.Get("Retry-After") == "" {
		t.Fatalf("accepting with the right password after ten wrong ones: %d, Retry-After %q; want 429\n%s", r.Status, r.Header.Get("Retry-After"), webExcerpt(r.Body))
	}
	other := &webPerson{t: t, ts: ts, origin: academy, b: browserFromIP(ts, nextSourceIP())}
	if r := other.submitForm(link, "invitation-form", url.Values{"password": {"ina-password-1"}}); r.Status != http.StatusSeeOther {
		t.Fatalf("accepting from another address: %d\n%s", r.Status, webExcerpt(r.Body))
	}
}

// The invitation's new-account form counts what a person counts: a
// password of four accented characters (eight bytes) is too short, and a
// name that is not text (bytes that are not UTF-8, a control character)
// is refused with the form's usual message, not stored raw.
func TestAccountsInvitationRefusesShortPasswordAndNonTextName(t *testing.T) {
	ts, mp := accountServer(t, backend{name: "embedded"}, nil)
	academy := ts.academy()
	token := admOwnerToken(t, ts, academy, "members:read", "members:write")
	email := uniqueEmail("newcomer")
	admDo(t, ts, "POST", academy, "/members", token, map[string]any{"email": email, "role": "student"}).want(t, http.StatusCreated, "invite")
	link := linkIn(t, mailTo(t, mp, email, 1), "/invitations/accept")
	p := browserAt(t, ts, academy)
	for _, tc := range []struct {
		name, userName, password, want string
	}{
		{"4 characters in 8 bytes", "Nia Newcomer", "ääää", "at least 8 characters"},
		{"a name that is not UTF-8", "\xff\xfe", "newcomer-password-1", "Enter your name"},
		{"a name with a control character", "Nia\x1b[2J", "newcomer-password-1", "Enter your name"},
	} {
		r := p.submitForm(link, "invitation-form", url.Values{"name": {tc.userName}, "password": {tc.password}})
		if r.Status != http.StatusUnprocessableEntity || !strings.Contains(r.Body, tc.want) {
			t.Fatalf("%s: %d, want 422 saying %q\n%s", tc.name, r.Status, tc.want, webExcerpt(r.Body))
		}
		if strings.Contains(r.Body, "\xff") || strings.Contains(r.Body, "\x1b") {
			t.Fatalf("%s: the page echoes the raw bytes", tc.name)
		}
	}
	if _, err := ts.app.Store.UserByEmail(t.Context(), email); err == nil {
		t.Fatal("a refused form created the account")
	}
	if r := p.submitForm(link, "invitation-form", url.Values{"name": {"Nïa Newcomer"}, "password": {"ääääääää"}}); r.Status != http.StatusSeeOther {
		t.Fatalf("eight accented characters and an accented name: %d\n%s", r.Status, webExcerpt(r.Body))
	}
}

// The sign-in page shows the address back after a failure; bytes that are
// not UTF-8 are dropped from it, not written raw into a UTF-8 page.
func TestSignInEchoesOnlyText(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	r := signInFrom(t, ts, ts.academy(), nextSourceIP(), "\xff\xfenobody@demo.test", "wrong-password")
	if r.Status != http.StatusUnauthorized {
		t.Fatalf("sign-in: %d", r.Status)
	}
	if strings.Contains(r.Body, "\xff") || !strings.Contains(r.Body, `value="nobody@demo.test"`) {
		t.Fatalf("the echoed address:\n%s", webExcerpt(r.Body))
	}
}
