package integration

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/google/go-cmp/cmp"
	"golang.org/x/oauth2"

	"github.com/lectern/lectern/internal/demo"
	"github.com/lectern/lectern/internal/oauthtest"
	"github.com/lectern/lectern/vocab"
)

// The acceptance flow: x/oauth2 with PKCE and resource through the real
// login and consent pages; go-oidc verifies the id_token; userinfo equals
// its claims; refresh rotates without an id_token; revocation sticks.
func TestCodeFlowWithRealClients(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, nil)
		f := newFlow(t, ts, ts.academy(), demo.MemberClientID, "openid", "profile", "email", "account:read")
		code := f.authorize(demo.StudentEmail, demo.StudentPassword)
		tok, err := f.exchange(code)
		if err != nil {
			t.Fatalf("exchange: %v", err)
		}
		if tok.RefreshToken == "" || tok.TokenType != "Bearer" || tok.Expiry.IsZero() {
			t.Fatalf("token response %+v", tok)
		}
		rawID, _ := tok.Extra("id_token").(string)
		if rawID == "" {
			t.Fatal("no id_token for scope openid at a site with id_tokens on")
		}
		provider, err := oidc.NewProvider(oidc.ClientContext(f.ctx, ts.client), f.origin)
		if err != nil {
			t.Fatalf("go-oidc discovery: %v", err)
		}
		idt, err := provider.Verifier(&oidc.Config{ClientID: demo.MemberClientID, SupportedSigningAlgs: []string{"ES256"}}).
			Verify(oidc.ClientContext(f.ctx, ts.client), rawID)
		if err != nil {
			t.Fatalf("go-oidc verification: %v", err)
		}
		if idt.Nonce != f.nonce || idt.Issuer != f.origin || idt.Expiry.Sub(idt.IssuedAt).Minutes() != 10 {
			t.Fatalf("id_token nonce %q iss %q lifetime %s", idt.Nonce, idt.Issuer, idt.Expiry.Sub(idt.IssuedAt))
		}
		var idClaims map[string]any
		if err := idt.Claims(&idClaims); err != nil {
			t.Fatal(err)
		}
		code2, _, info := f.userinfo(tok.AccessToken)
		if code2 != 200 {
			t.Fatalf("userinfo %d %v", code2, info)
		}
		for _, c := range []string{"sub", "email", "name", "picture", "org_id", "roles"} {
			if !cmp.Equal(idClaims[c], info[c]) {
				t.Errorf("claim %s: id_token %v, userinfo %v", c, idClaims[c], info[c])
			}
		}
		if info["email"] != demo.StudentEmail || info["name"] != "Sam Student" || !cmp.Equal(info["roles"], []any{"student"}) {
			t.Errorf("userinfo %v", info)
		}

		// Refresh: a new refresh token, no id_token.
		src := f.conf.TokenSource(f.ctx, &oauth2.Token{RefreshToken: tok.RefreshToken})
		refreshed, err := src.Token()
		if err != nil {
			t.Fatalf("refresh: %v", err)
		}
		if refreshed.RefreshToken == "" || refreshed.RefreshToken == tok.RefreshToken {
			t.Fatal("refresh did not rotate the refresh token")
		}
		if refreshed.Extra("id_token") != nil {
			t.Fatal("refresh response carries an id_token")
		}
		if code, _, _ := f.userinfo(refreshed.AccessToken); code != 200 {
			t.Fatalf("refreshed access token at userinfo: %d", code)
		}

		// Revoke the access token: it is refused at once; the refreshed
		// one of the same grant still works.
		status, _, body := ts.postForm(t, f.origin+vocab.RevocationPath, url.Values{"token": {tok.AccessToken}, "client_id": {demo.MemberClientID}})
		if status != 200 || body != nil {
			t.Fatalf("revoke: %d %v; want 200 with an empty body", status, body)
		}
		code3, hdr, _ := f.userinfo(tok.AccessToken)
		if code3 != 401 || !strings.Contains(hdr.Get("WWW-Authenticate"), `resource_metadata="`+f.origin+`/.well-known/oauth-protected-resource"`) {
			t.Fatalf("revoked token at userinfo: %d %q", code3, hdr.Get("WWW-Authenticate"))
		}
		if code, _, _ := f.userinfo(refreshed.AccessToken); code != 200 {
			t.Fatalf("the other access token of the grant: %d", code)
		}
		// Revoke the refresh token: the whole grant goes.
		ts.postForm(t, f.origin+vocab.RevocationPath, url.Values{"token": {refreshed.RefreshToken}, "client_id": {demo.MemberClientID}})
		if code, _, _ := f.userinfo(refreshed.AccessToken); code != 401 {
			t.Fatalf("access token of a revoked grant: %d; want 401", code)
		}
		if _, err := f.conf.TokenSource(f.ctx, &oauth2.Token{RefreshToken: refreshed.RefreshToken}).Token(); oauthErrorCode(err) != "invalid_grant" {
			t.Fatalf("revoked refresh token: %v; want invalid_grant", err)
		}
	})
}

// expectRedirectError asserts that authURL ends in a redirect to the client
// with the OAuth error code (plus state and iss).
func expectRedirectError(t *testing.T, f *flow, authURL, wantCode string, o oauthtest.Options) {
	t.Helper()
	out, err := f.browser.Authorize(authURL, o)
	if err != nil {
		t.Fatal(err)
	}
	if out.Redirect == nil {
		t.Fatalf("want a redirect with error=%s; the server showed %d: %.300s", wantCode, out.Page.Status, out.Page.Body)
	}
	q := out.Redirect.Query()
	if q.Get("error") != wantCode || q.Get("error_description") == "" || q.Get("iss") != f.origin {
		t.Fatalf("redirect %s; want error=%s with a description and iss", out.Redirect, wantCode)
	}
	if st := q.Get("state"); st != "" && st != f.state {
		t.Fatalf("state %q; want %q", st, f.state)
	}
}

// expectErrorPage asserts that authURL shows an error page and never
// redirects to the (untrusted) redirect URI.
func expectErrorPage(t *testing.T, f *flow, authURL string) {
	t.Helper()
	out, err := f.browser.Authorize(authURL, oauthtest.Options{Email: demo.StudentEmail, Password: demo.StudentPassword})
	if err != nil {
		t.Fatal(err)
	}
	if out.Redirect != nil {
		t.Fatalf("redirected to %s; an untrusted redirect must get an error page", out.Redirect)
	}
	if out.Page.Status != 400 || !strings.Contains(out.Page.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("error page: %d %s", out.Page.Status, out.Page.Header.Get("Content-Type"))
	}
	if ct := out.Page.Header.Get("Content-Security-Policy"); !strings.Contains(ct, "frame-ancestors 'none'") {
		t.Fatalf("page without frame-ancestors 'none': %q", ct)
	}
}

func TestAuthorizeErrors(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	ctx := context.Background()
	openSite, _ := ts.app.Store.SiteBySlug(ctx, demo.OpenSlug)
	openOnly := demo.MemberClient(openSite.ID)
	openOnly.ClientID = "open-school-only"
	if err := ts.app.Store.CreateClient(ctx, openOnly); err != nil {
		t.Fatal(err)
	}
	member := func() *flow {
		return newFlow(t, ts, ts.academy(), demo.MemberClientID, "openid", "account:read")
	}
	withRedirect := func(f *flow, redirect string) string {
		u, _ := url.Parse(f.authURL())
		q := u.Query()
		q.Set("redirect_uri", redirect)
		u.RawQuery = q.Encode()
		return u.String()
	}
	without := func(f *flow, params ...string) string {
		u, _ := url.Parse(f.authURL())
		q := u.Query()
		for _, p := range params {
			q.Del(p)
		}
		u.RawQuery = q.Encode()
		return u.String()
	}
	student := oauthtest.Options{Email: demo.StudentEmail, Password: demo.StudentPassword}

	t.Run("redirect_uri mismatch shows an error page", func(t *testing.T) {
		for _, bad := range []string{
			"http://127.0.0.1:53682/other",         // path
			"http://127.0.0.1:53682/Callback",      // case
			"http://127.0.0.1:53682/callback/",     // trailing slash
			"http://127.0.0.1:53682/callback?x=1",  // extra query
			"http://127.0.0.1:53682/callback#frag", // fragment
			"http://127.0.0.1:0/callback",          // port 0 (any other port matches)
			"http://127.0.0.1:/callback",           // empty port
			"http://localhost:53682/callback",      // localhost is not 127.0.0.1
			"https://127.0.0.1:53682/callback",     // scheme
			"https://evil.example/callback",
		} {
			t.Run(bad, func(t *testing.T) { expectErrorPage(t, member(), withRedirect(member(), bad)) })
		}
	})
	t.Run("loopback on another port is accepted", func(t *testing.T) {
		f := member()
		f.conf.RedirectURL = "http://127.0.0.1:61999/callback"
		code := f.authorize(demo.StudentEmail, demo.StudentPassword)
		if _, err := f.exchange(code); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("unknown client shows an error page", func(t *testing.T) {
		f := newFlow(t, ts, ts.academy(), "no-such-client", "openid")
		expectErrorPage(t, f, f.authURL())
	})
	t.Run("a client_id of another site shows an error page", func(t *testing.T) {
		f := newFlow(t, ts, ts.academy(), "open-school-only", "openid")
		expectErrorPage(t, f, f.authURL())
	})
	t.Run("missing client_id shows an error page", func(t *testing.T) {
		f := member()
		expectErrorPage(t, f, without(f, "client_id"))
	})
	t.Run("plain PKCE", func(t *testing.T) {
		f := member()
		expectRedirectError(t, f, f.conf.AuthCodeURL(f.state, oauth2.SetAuthURLParam("code_challenge", f.verifier),
			oauth2.SetAuthURLParam("code_challenge_method", "plain"), oauth2.SetAuthURLParam("resource", f.origin)), "invalid_request", student)
	})
	t.Run("missing code_challenge", func(t *testing.T) {
		f := member()
		expectRedirectError(t, f, without(f, "code_challenge", "code_challenge_method"), "invalid_request", student)
	})
	t.Run("missing code_challenge_method", func(t *testing.T) {
		f := member()
		expectRedirectError(t, f, without(f, "code_challenge_method"), "invalid_request", student)
	})
	t.Run("response_type token", func(t *testing.T) {
		f := member()
		u := strings.Replace(f.authURL(), "response_type=code", "response_type=token", 1)
		expectRedirectError(t, f, u, "unsupported_response_type", student)
	})
	t.Run("missing resource for a member client", func(t *testing.T) {
		f := member()
		expectRedirectError(t, f, without(f, "resource"), "invalid_target", student)
	})
	t.Run("resource of another origin", func(t *testing.T) {
		f := member()
		expectRedirectError(t, f, f.authURL(oauth2.SetAuthURLParam("resource", ts.open())), "invalid_target", student)
	})
	t.Run("resource with a trailing slash is the same resource", func(t *testing.T) {
		f := member()
		code := f.authorize(demo.StudentEmail, demo.StudentPassword, oauth2.SetAuthURLParam("resource", f.origin+"/"))
		if _, err := f.exchange(code, oauth2.SetAuthURLParam("resource", f.origin+"/")); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("resource with a path", func(t *testing.T) {
		f := member()
		expectRedirectError(t, f, f.authURL(oauth2.SetAuthURLParam("resource", f.origin+"/mcp")), "invalid_target", student)
	})
	t.Run("account:read from an operator client", func(t *testing.T) {
		f := newFlow(t, ts, ts.academy(), demo.VendorClientID, "openid", "account:read")
		expectRedirectError(t, f, f.authURL(), "invalid_scope", oauthtest.Options{Email: demo.OwnerEmail, Password: demo.OwnerPassword})
	})
	t.Run("an operator scope from a member client", func(t *testing.T) {
		f := newFlow(t, ts, ts.academy(), demo.MemberClientID, "openid", "courses:read")
		expectRedirectError(t, f, f.authURL(), "invalid_scope", student)
	})
	t.Run("unknown scope", func(t *testing.T) {
		f := newFlow(t, ts, ts.academy(), demo.MemberClientID, "openid", "everything")
		expectRedirectError(t, f, f.authURL(), "invalid_scope", student)
	})
	t.Run("missing state", func(t *testing.T) {
		f := member()
		expectRedirectError(t, f, without(f, "state"), "invalid_request", student)
	})
	t.Run("repeated parameter", func(t *testing.T) {
		f := member()
		expectRedirectError(t, f, f.authURL()+"&scope=openid", "invalid_request", student)
	})
	t.Run("outsider with no role", func(t *testing.T) {
		f := member()
		out, err := f.browser.Authorize(f.authURL(), oauthtest.Options{Email: demo.OutsiderEmail, Password: demo.OutsiderPassword})
		if err != nil {
			t.Fatal(err)
		}
		if out.Page == nil || out.Page.Status != http.StatusForbidden || !strings.Contains(out.Page.Body, "cannot give") {
			t.Fatalf("outsider should see a refusal page; got %+v", out)
		}
		out, err = oauthtest.NewBrowser(ts.addr).Authorize(f.authURL(), oauthtest.Options{Email: demo.OutsiderEmail, Password: demo.OutsiderPassword, FollowRefusal: true})
		if err != nil {
			t.Fatal(err)
		}
		if out.Redirect == nil || out.Redirect.Query().Get("error") != "access_denied" || out.Redirect.Query().Get("state") != f.state {
			t.Fatalf("the client should get access_denied; got %+v", out)
		}
	})
	t.Run("lecturer cannot authorize students:read for the vendor client", func(t *testing.T) {
		f := newFlow(t, ts, ts.academy(), demo.VendorClientID, "openid", "students:read")
		out, err := f.browser.Authorize(f.authURL(), oauthtest.Options{Email: demo.LecturerEmail, Password: demo.LecturerPassword, FollowRefusal: true})
		if err != nil {
			t.Fatal(err)
		}
		if out.Redirect == nil || out.Redirect.Query().Get("error") != "access_denied" {
			t.Fatalf("want access_denied; got %+v", out)
		}
	})
	t.Run("consent denied", func(t *testing.T) {
		f := member()
		// prompt=consent: the student approved this client in earlier subtests.
		expectRedirectError(t, f, f.authURL(oauth2.SetAuthURLParam("prompt", "consent")), "access_denied", oauthtest.Options{Email: demo.StudentEmail, Password: demo.StudentPassword, Decision: "deny"})
	})
	t.Run("prompt=none without a session", func(t *testing.T) {
		f := member()
		expectRedirectError(t, f, f.authURL(oauth2.SetAuthURLParam("prompt", "none")), "login_required", oauthtest.Options{})
	})
}

func TestLoginCSRF(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	f := newFlow(t, ts, ts.academy(), demo.MemberClientID, "openid")
	out, err := f.browser.Authorize(f.authURL(), oauthtest.Options{}) // stops at the login form
	if err != nil || out.Page == nil {
		t.Fatalf("%v %+v", err, out)
	}
	form, err := oauthtest.ParseForm(out.Page.Body, "login-form")
	if err != nil {
		t.Fatal(err)
	}
	if form.Values.Get("csrf_token") == "" {
		t.Fatal("login form has no csrf_token")
	}
	for name, token := range map[string]string{"missing": "", "wrong": strings.Repeat("A", 43)} {
		t.Run(name, func(t *testing.T) {
			v := url.Values{}
			for k, vs := range form.Values {
				v[k] = vs
			}
			v.Set("email", demo.StudentEmail)
			v.Set("password", demo.StudentPassword)
			if token == "" {
				v.Del("csrf_token")
			} else {
				v.Set("csrf_token", token)
			}
			page, err := f.browser.PostForm(ts.academy()+"/login", v)
			if err != nil {
				t.Fatal(err)
			}
			if page.Status != http.StatusForbidden {
				t.Fatalf("login with %s csrf_token: %d; want 403", name, page.Status)
			}
			for _, c := range page.Header.Values("Set-Cookie") {
				if strings.HasPrefix(c, "lectern_session") {
					t.Fatalf("a session was created despite the CSRF failure: %s", c)
				}
			}
		})
	}
	// A cross-site page cannot read the cookie: the same form from another
	// browser (another cookie) is refused too.
	other := oauthtest.NewBrowser(ts.addr)
	v := url.Values{"csrf_token": {form.Values.Get("csrf_token")}, "email": {demo.StudentEmail}, "password": {demo.StudentPassword}, "auth_request": {form.Values.Get("auth_request")}}
	if page, _ := other.PostForm(ts.academy()+"/login", v); page.Status != http.StatusForbidden {
		t.Fatalf("a token from another browser: %d; want 403", page.Status)
	}
}
