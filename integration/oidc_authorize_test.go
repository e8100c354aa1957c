package integration

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/lectern/lectern/internal/demo"
	"github.com/lectern/lectern/internal/oauthtest"
	"github.com/lectern/lectern/vocab"
)

// idTokenClaims exchanges code and returns the id_token's claims.
func idTokenClaims(t *testing.T, f *flow, code string) map[string]any {
	t.Helper()
	tok, err := f.exchange(code)
	if err != nil {
		t.Fatalf("exchange: %v", err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		t.Fatal("no id_token")
	}
	return decodeJWTClaims(t, raw)
}

// expectSignInForm asserts that authURL, in f's browser, stops at the
// sign-in form (for a new request) and returns its auth_request.
func expectSignInForm(t *testing.T, f *flow, authURL string) string {
	t.Helper()
	out, err := f.browser.Authorize(authURL, oauthtest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Page == nil {
		t.Fatalf("redirected to the client (%s); want the sign-in form", out.Redirect)
	}
	form, err := oauthtest.ParseForm(out.Page.Body, "login-form")
	if err != nil || form.Values.Get("auth_request") == "" {
		t.Fatalf("want the sign-in form of the request; got %d: %.300s", out.Page.Status, out.Page.Body)
	}
	return form.Values.Get("auth_request")
}

// max_age (OpenID Connect Core §3.1.2.1): a session authenticated longer
// ago than max_age seconds (max_age=0: always) must sign in again, or
// gets login_required with prompt=none; the id_token's auth_time is the
// new sign-in's. No later step of the request (consent, continue) lets
// the old session through.
func TestOIDCMaxAge(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, nil)
		f := newFlow(t, ts, ts.academy(), demo.MemberClientID, "openid", "account:read")
		first := idTokenClaims(t, f, f.authorize(demo.StudentEmail, demo.StudentPassword))
		firstAuth, _ := first["auth_time"].(float64)
		time.Sleep(1100 * time.Millisecond) // auth_time counts seconds
		maxAge := func(v string, extra ...oauth2.AuthCodeOption) string {
			return f.authURL(append([]oauth2.AuthCodeOption{oauth2.SetAuthURLParam("max_age", v)}, extra...)...)
		}

		// A session younger than max_age: the code at once.
		out, err := f.browser.Authorize(maxAge("3600"), oauthtest.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := out.Code(); err != nil {
			t.Fatalf("max_age=3600 with a fresh session: %v", err)
		}
		if c := idTokenClaims(t, f, mustCode(t, out)); c["auth_time"] != firstAuth {
			t.Errorf("max_age=3600: auth_time %v; want the session's %v", c["auth_time"], firstAuth)
		}

		expectRedirectError(t, f, maxAge("0", oauth2.SetAuthURLParam("prompt", "none")), "login_required", oauthtest.Options{})
		expectRedirectError(t, f, maxAge("1", oauth2.SetAuthURLParam("prompt", "none")), "login_required", oauthtest.Options{})
		for _, bad := range []string{"-1", "abc", "1.5", ""} {
			expectRedirectError(t, f, maxAge(bad), "invalid_request", oauthtest.Options{})
		}
		expectRedirectError(t, f, maxAge("60")+"&max_age=60", "invalid_request", oauthtest.Options{})

		// max_age=0: the sign-in form, though the session is fresh and
		// consent remembered; the old session gets around it neither by
		// the consent page nor by /login/continue.
		id := expectSignInForm(t, f, maxAge("0"))
		for _, path := range []string{"/consent?auth_request=" + id, "/login/continue?auth_request=" + id} {
			page, err := f.browser.Get(f.origin + path)
			if err != nil {
				t.Fatal(err)
			}
			if loc := page.Header.Get("Location"); page.Status != http.StatusFound || loc != "/login?auth_request="+id {
				t.Fatalf("GET %s with the session max_age refused: %d to %q; want the sign-in form", path, page.Status, loc)
			}
		}
		before := time.Now()
		out, err = f.browser.Authorize(f.origin+"/login?auth_request="+id, oauthtest.Options{Email: demo.StudentEmail, Password: demo.StudentPassword})
		if err != nil {
			t.Fatal(err)
		}
		again := idTokenClaims(t, f, mustCode(t, out))
		if at, _ := again["auth_time"].(float64); at <= firstAuth {
			t.Errorf("auth_time %v after signing in again; want later than the first sign-in's %v", at, firstAuth)
		}
		checkAuthTime(t, again, before)
		// The new session satisfies a max_age it is younger than.
		out, err = f.browser.Authorize(maxAge("60", oauth2.SetAuthURLParam("prompt", "none")), oauthtest.Options{})
		if err != nil {
			t.Fatal(err)
		}
		mustCode(t, out)
	})
}

func mustCode(t *testing.T, out *oauthtest.Outcome) string {
	t.Helper()
	code, err := out.Code()
	if err != nil {
		t.Fatal(err)
	}
	return code
}

// prompt is a space-delimited list (OpenID Connect Core §3.1.2.1):
// "login consent" signs in again and asks for consent again;
// select_account is a sign-in; none stands alone; and prompt=none shows no
// page, not even the refusal.
func TestOIDCPromptList(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	f := newFlow(t, ts, ts.academy(), demo.MemberClientID, "openid", "account:read")
	f.authorize(demo.StudentEmail, demo.StudentPassword) // signed in, consent remembered
	prompt := func(v string) string { return f.authURL(oauth2.SetAuthURLParam("prompt", v)) }

	expectSignInForm(t, f, prompt("login consent"))
	// Signed in again, the consent page comes although consent is
	// remembered: denying it is what the client hears.
	expectRedirectError(t, f, prompt("login consent"), "access_denied",
		oauthtest.Options{Email: demo.StudentEmail, Password: demo.StudentPassword, Decision: "deny"})
	expectSignInForm(t, f, prompt("select_account"))
	for _, bad := range []string{"none login", "consent none", "create", "Login"} {
		expectRedirectError(t, f, prompt(bad), "invalid_request", oauthtest.Options{})
	}
	expectRedirectError(t, f, prompt("login")+"&prompt=consent", "invalid_request", oauthtest.Options{})

	outsider := newFlow(t, ts, ts.academy(), demo.MemberClientID, "openid", "account:read")
	if _, err := outsider.browser.Authorize(outsider.authURL(), oauthtest.Options{Email: demo.OutsiderEmail, Password: demo.OutsiderPassword}); err != nil {
		t.Fatal(err)
	}
	expectRedirectError(t, outsider, outsider.authURL(oauth2.SetAuthURLParam("prompt", "none")), "access_denied", oauthtest.Options{})
}

// response_mode, like every parameter, may appear once (RFC 6749 §3.1).
func TestAuthorizeRepeatedResponseMode(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	f := newFlow(t, ts, ts.academy(), demo.MemberClientID, "openid", "account:read")
	student := oauthtest.Options{Email: demo.StudentEmail, Password: demo.StudentPassword}
	for _, modes := range [][]string{{"query", "query"}, {"query", "fragment"}, {"fragment", "query"}} {
		u := f.authURL() + "&response_mode=" + strings.Join(modes, "&response_mode=")
		expectRedirectError(t, f, u, "invalid_request", student)
	}
	code := f.authorize(demo.StudentEmail, demo.StudentPassword, oauth2.SetAuthURLParam("response_mode", "query"))
	if _, err := f.exchange(code); err != nil {
		t.Fatal(err)
	}
}

// The authorization endpoint takes POST with form-encoded parameters
// (OpenID Connect Core §3.1.2.1) and handles it as GET; other methods get
// its HTML page, not the router's JSON.
func TestAuthorizePost(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	f := newFlow(t, ts, ts.academy(), demo.MemberClientID, "openid", "account:read")
	params := func(extra ...oauth2.AuthCodeOption) url.Values {
		u, err := url.Parse(f.authURL(extra...))
		if err != nil {
			t.Fatal(err)
		}
		return u.Query()
	}
	endpoint := f.origin + vocab.AuthorizePath

	// Not signed in: the sign-in form of the request, then the code.
	page, err := f.browser.PostForm(endpoint, params())
	if err != nil {
		t.Fatal(err)
	}
	loc, _ := page.URL.Parse(page.Header.Get("Location"))
	if page.Status != http.StatusFound || loc == nil || loc.Path != "/login" || loc.Query().Get("auth_request") == "" {
		t.Fatalf("POST %s: %d to %q; want the sign-in form", vocab.AuthorizePath, page.Status, page.Header.Get("Location"))
	}
	out, err := f.browser.Authorize(loc.String(), oauthtest.Options{Email: demo.StudentEmail, Password: demo.StudentPassword})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.exchange(mustCode(t, out)); err != nil {
		t.Fatalf("exchange of the POSTed request's code: %v", err)
	}

	// Signed in, consent remembered: the code at once; errors redirect
	// as for GET.
	page, err = f.browser.PostForm(endpoint, params(oauth2.SetAuthURLParam("prompt", "none")))
	if err != nil {
		t.Fatal(err)
	}
	loc, _ = page.URL.Parse(page.Header.Get("Location"))
	if page.Status != http.StatusFound || loc == nil || loc.Query().Get("code") == "" || loc.Query().Get("state") != f.state {
		t.Fatalf("POST signed in: %d to %q; want the code", page.Status, page.Header.Get("Location"))
	}
	bad := params()
	bad.Set("code_challenge_method", "plain")
	page, err = f.browser.PostForm(endpoint, bad)
	if err != nil {
		t.Fatal(err)
	}
	loc, _ = page.URL.Parse(page.Header.Get("Location"))
	if page.Status != http.StatusFound || loc == nil || loc.Query().Get("error") != "invalid_request" {
		t.Fatalf("POST with plain PKCE: %d to %q; want invalid_request at the client", page.Status, page.Header.Get("Location"))
	}

	// The client's page posts from another site: the request itself is
	// no forgery (only the consent form, with its token, decides), so it
	// is taken; the Lax session cookie is not sent, so the person signs in.
	req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(params().Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "https://client.example")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	resp, err := oauthtest.NewBrowser(ts.addr).Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusFound || !strings.HasPrefix(loc, "/login?auth_request=") {
		t.Fatalf("POST from another site: %d to %q; want the sign-in form", resp.StatusCode, loc)
	}

	// A POST with parameters in the URL, or not form-encoded, and other
	// methods: the HTML error page, never a redirect.
	for _, c := range []struct {
		name, method, target, contentType string
		want                              int
	}{
		{"query and body", http.MethodPost, endpoint + "?client_id=" + demo.MemberClientID, "application/x-www-form-urlencoded", http.StatusBadRequest},
		{"JSON", http.MethodPost, endpoint, "application/json", http.StatusBadRequest},
		{"PUT", http.MethodPut, endpoint, "application/x-www-form-urlencoded", http.StatusMethodNotAllowed},
		{"DELETE", http.MethodDelete, endpoint, "", http.StatusMethodNotAllowed},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest(c.method, c.target, strings.NewReader(params().Encode()))
			if c.contentType != "" {
				req.Header.Set("Content-Type", c.contentType)
			}
			resp, err := f.browser.Client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != c.want || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") || resp.Header.Get("Location") != "" {
				t.Fatalf("%s: %d %s Location %q; want %d with the HTML page", c.name, resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Location"), c.want)
			}
			if c.want == http.StatusMethodNotAllowed && resp.Header.Get("Allow") != "GET, POST" {
				t.Errorf("Allow %q; want GET, POST", resp.Header.Get("Allow"))
			}
		})
	}
}

// Every claim of a real id_token is listed in the site's claims_supported
// (OpenID Connect Discovery §3), amr among them.
func TestIDTokenClaimsAreSupported(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	f := newFlow(t, ts, ts.academy(), demo.MemberClientID, "openid", "profile", "email", "account:read")
	claims := idTokenClaims(t, f, f.authorize(demo.StudentEmail, demo.StudentPassword))
	var meta struct {
		ClaimsSupported []string `json:"claims_supported"`
	}
	ts.getJSON(t, f.origin, vocab.OpenIDConfigurationPath, http.StatusOK, &meta)
	if _, ok := claims["amr"]; !ok {
		t.Fatalf("the id_token has no amr: %v", claims)
	}
	for name := range claims {
		if !slices.Contains(meta.ClaimsSupported, name) {
			t.Errorf("the id_token carries %s; claims_supported %v does not list it", name, meta.ClaimsSupported)
		}
	}
}
