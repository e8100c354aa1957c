package integration

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/lectern/lectern/internal/demo"
)

var sessionRowRE = regexp.MustCompile(`data-session="([^"]+)"( data-current="true")?`)

// sessionHandles lists the sessions on p's security page: its own and the
// others.
func sessionHandles(t *testing.T, p *webPerson) (current string, others []string) {
	t.Helper()
	page := p.expect("/account/security", http.StatusOK)
	for _, m := range sessionRowRE.FindAllStringSubmatch(page.Body, -1) {
		if m[2] != "" {
			current = m[1]
		} else {
			others = append(others, m[1])
		}
	}
	if current == "" {
		t.Fatalf("the security page does not mark this browser's session:\n%s", webExcerpt(page.Body))
	}
	return current, others
}

// postFrom posts v to path of p's site with an Origin header.
func postFrom(t *testing.T, p *webPerson, path, origin string, v url.Values) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, p.origin+path, strings.NewReader(v.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", origin)
	resp, err := p.b.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func signedIn(t *testing.T, p *webPerson) bool {
	t.Helper()
	return p.get("/account").Status == http.StatusOK
}

// The member's sessions on the account page: listed with device, network
// and last use; one signed out from another browser; another site's
// session or passkey cannot be named; forms without the anti-forgery
// token or from another origin change nothing; "Sign out everywhere" ends
// every session at the site.
func TestAccountSessions(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, nil)
		a := webSignIn(t, ts, ts.academy(), demo.StudentEmail, demo.StudentPassword)
		other := webSignIn(t, ts, ts.academy(), demo.StudentEmail, demo.StudentPassword)
		atOpen := webSignIn(t, ts, ts.open(), demo.StudentEmail, demo.StudentPassword)

		page := a.expect("/account/security", http.StatusOK)
		for _, want := range []string{"This browser", "This network (127.0.0.0/24)", "Sign out everywhere", "Signed in with password"} {
			if !strings.Contains(page.Body, want) {
				t.Errorf("the sessions list lacks %q", want)
			}
		}
		_, others := sessionHandles(t, a)
		if len(others) != 1 {
			t.Fatalf("sessions at the academy besides this one: %d; want 1 (the open school's is not listed here)", len(others))
		}
		openHandle, _ := sessionHandles(t, atOpen)
		csrf := a.csrf()

		// Another site's session: not found, still signed in.
		if st := a.post("/account/security/sessions/"+openHandle+"/end", url.Values{"csrf_token": {csrf}}).Status; st != http.StatusNotFound {
			t.Errorf("ending the open school's session from the academy: %d; want 404", st)
		}
		if !signedIn(t, atOpen) {
			t.Fatal("the open school's session ended")
		}
		// A made-up handle, and another site's passkey ID: not found.
		if st := a.post("/account/security/sessions/nope/end", url.Values{"csrf_token": {csrf}}).Status; st != http.StatusNotFound {
			t.Errorf("ending an unknown session: %d; want 404", st)
		}
		for _, path := range []string{"/account/security/passkeys/999999/rename", "/account/security/passkeys/999999/remove"} {
			if st := a.post(path, url.Values{"csrf_token": {csrf}, "name": {"x"}}).Status; st != http.StatusNotFound {
				t.Errorf("POST %s: %d; want 404", path, st)
			}
		}
		// Without the token, or from another origin: refused, unchanged.
		if st := a.post("/account/security/sessions/"+others[0]+"/end", url.Values{}).Status; st != http.StatusForbidden {
			t.Errorf("ending a session without the CSRF token: %d; want 403", st)
		}
		if st := postFrom(t, a, "/account/security/sessions/"+others[0]+"/end", "http://evil.test", url.Values{"csrf_token": {csrf}}); st != http.StatusForbidden {
			t.Errorf("ending a session from another origin: %d; want 403", st)
		}
		if st := postFrom(t, a, "/account/security/totp", ts.open(), url.Values{"csrf_token": {csrf}}); st != http.StatusForbidden {
			t.Errorf("starting TOTP from a sibling site's origin: %d; want 403", st)
		}
		if !signedIn(t, other) {
			t.Fatal("a refused form ended the session")
		}
		// Signing out the other browser.
		if st := a.post("/account/security/sessions/"+others[0]+"/end", url.Values{"csrf_token": {csrf}}).Status; st != http.StatusSeeOther {
			t.Fatalf("ending the other session: %d", st)
		}
		if signedIn(t, other) {
			t.Fatal("the other browser is still signed in")
		}
		if _, left := sessionHandles(t, a); len(left) != 0 {
			t.Errorf("after signing out the other browser %d others are listed", len(left))
		}
		// Everywhere (at this site).
		again := webSignIn(t, ts, ts.academy(), demo.StudentEmail, demo.StudentPassword)
		if st := a.post("/account/security/sessions/end-all", url.Values{"csrf_token": {csrf}}).Status; st != http.StatusSeeOther {
			t.Fatalf("sign out everywhere: %d", st)
		}
		if signedIn(t, a) || signedIn(t, again) {
			t.Fatal("a session at the academy survived signing out everywhere")
		}
		if !signedIn(t, atOpen) {
			t.Error("signing out everywhere at the academy ended the open school's session")
		}
	})
}
