package integration

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// What a request sends is not echoed back whole (audit L, finding 7): the
// sign-in form does not re-render an over-long address or request ID,
// not even when the form expired (7d), and an error page's language links
// neither repeat a long query nor copy a link's single-use token (7b).
func TestPagesDoNotEchoLongInput(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	p := webAnonymous(t, ts, ts.academy())
	long := strings.Repeat("a", 50000)
	marker := strings.Repeat("a", 400) // more than any bound: never in a page

	// check fails unless the page is small and holds no run of the input.
	check := func(what string, status int, body string, want int) {
		t.Helper()
		if status != want {
			t.Errorf("%s: status %d; want %d", what, status, want)
		}
		if strings.Contains(body, marker) || len(body) > 16<<10 {
			t.Errorf("%s: a page of %d bytes repeats the input", what, len(body))
		}
	}

	lf := p.form("/login", "login-form", nil)
	good := lf.Get("csrf_token")
	for _, c := range []struct {
		name string
		set  url.Values
		want int
	}{
		{"a long address, the form expired", url.Values{"email": {long + "@example.test"}, "password": {"x"}, "csrf_token": {"wrong"}}, http.StatusForbidden},
		{"a long address", url.Values{"email": {long + "@example.test"}, "password": {"x"}, "csrf_token": {good}}, http.StatusUnauthorized},
		{"a long address without a password", url.Values{"email": {long + "@example.test"}, "csrf_token": {good}}, http.StatusBadRequest},
		{"a long request ID, the form expired", url.Values{"email": {"a@example.test"}, "password": {"x"}, "auth_request": {long}, "csrf_token": {"wrong"}}, http.StatusForbidden},
	} {
		res := p.post("/login", c.set)
		check("POST /login, "+c.name, res.Status, res.Body, c.want)
	}
	// An address within the bound is still given back to correct.
	res := p.post("/login", url.Values{"email": {"someone@example.test"}, "password": {"x"}, "csrf_token": {"wrong"}})
	if res.Status != http.StatusForbidden || !strings.Contains(res.Body, `value="someone@example.test"`) {
		t.Errorf("an expired form with a short address: %d; want 403 with the address kept", res.Status)
	}

	// Error pages: a 20 KB query is not repeated in the language links,
	// nor is a token.
	query := strings.Repeat("A", 20000)
	for _, path := range []string{"/password/reset?token=", "/invitations/accept?token=", "/email/confirm?token=", "/consent?auth_request=", "/login?auth_request="} {
		res := p.get(path + query)
		if strings.Contains(res.Body, strings.Repeat("A", 400)) || len(res.Body) > 16<<10 {
			t.Errorf("GET %s<20 KB>: a page of %d bytes repeats the query", path, len(res.Body))
		}
	}
	token := "Tok" + strings.Repeat("x", 40)
	for _, path := range []string{"/password/reset", "/invitations/accept", "/email/confirm"} {
		res := p.get(path + "?token=" + token)
		if strings.Contains(res.Body, token) {
			t.Errorf("GET %s?token=…: the page repeats the token", path)
		}
	}
}
