package integration

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// The account forms refuse what a forged or careless request sends: a
// form from another origin, a form without its CSRF token, a mangled link,
// and more requests from one client than a person makes. None of it
// changes anything or shows internals.
func TestAccountsBadInput(t *testing.T) {
	ts, mp := accountServer(t, backend{name: "embedded"}, nil)
	academy := ts.academy()
	victim := uniqueEmail("victim")
	if _, err := ts.app.Platform.CreateUser(t.Context(), victim, "Vic", "", "victim-password-1"); err != nil {
		t.Fatal(err)
	}
	p := browserAt(t, ts, academy)
	form := p.get("/password/forgot")
	csrf := webCSRFField.FindStringSubmatch(form.Body)[1]

	// Another origin's page posting into this one.
	req, _ := http.NewRequest(http.MethodPost, academy+"/password/forgot", strings.NewReader(url.Values{"csrf_token": {csrf}, "email": {victim}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "https://evil.example")
	for _, c := range p.b.Client.Jar.Cookies(mustURL(academy)) {
		req.AddCookie(c)
	}
	resp, err := ts.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a cross-origin form: %d", resp.StatusCode)
	}
	// Without the CSRF token.
	if r := p.post("/password/forgot", url.Values{"email": {victim}}); r.Status != http.StatusForbidden || strings.Contains(r.Body, "goroutine") {
		t.Fatalf("a form without its token: %d", r.Status)
	}
	noMailTo(t, mp, victim, 0)

	// Mangled and unknown links: 400, a plain page, no redirect.
	for _, path := range []string{
		"/password/reset", "/password/reset?token=", "/password/reset?token=%00%01", "/password/reset?token=" + strings.Repeat("x", 5000),
		"/invitations/accept?token=not-a-token", "/signup/verify?token=" + strings.Repeat("A", 43), "/email/confirm?token=..%2F..",
	} {
		r := p.get(path)
		if r.Status != http.StatusBadRequest || r.Header.Get("Location") != "" || !strings.Contains(r.Body, "not valid") {
			t.Errorf("GET %s: %d %s", path, r.Status, r.Header.Get("Location"))
		}
	}
	// A body too large for any form: 413 (send less), not the 400 of a
	// malformed form.
	if r := p.post("/password/forgot", url.Values{"csrf_token": {csrf}, "email": {strings.Repeat("a", 40<<10) + "@x.test"}}); r.Status != http.StatusRequestEntityTooLarge {
		t.Fatalf("an oversized form: %d", r.Status)
	}

	// One client asking for many addresses is stopped (20 an hour).
	var last int
	for i := 0; i < 21; i++ {
		last = p.post("/password/forgot", url.Values{"csrf_token": {csrf}, "email": {uniqueEmail("sprayed")}}).Status
		if i < 20 && last != http.StatusOK {
			t.Fatalf("request %d: %d", i+1, last)
		}
	}
	if last != http.StatusTooManyRequests {
		t.Fatalf("the 21st request from one client: %d, want 429", last)
	}
}
