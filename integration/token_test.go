package integration

import (
	"context"
	"crypto/sha256"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/lectern/lectern/authserver/scope"
	"github.com/lectern/lectern/internal/demo"
	"github.com/lectern/lectern/internal/oauthtest"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/vocab"
)

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

func TestTokenErrors(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, &serverOptions{configure: nil})
		ts.srv.Auth().SetCodeLifetime(time.Second)
		token := ts.academy() + vocab.TokenPath
		member := func() *flow { return newFlow(t, ts, ts.academy(), demo.MemberClientID, "openid", "account:read") }

		t.Run("code replay revokes the first tokens", func(t *testing.T) {
			f := member()
			code := f.authorize(demo.StudentEmail, demo.StudentPassword)
			first, err := f.exchange(code)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.exchange(code); oauthErrorCode(err) != "invalid_grant" {
				t.Fatalf("second use: %v; want invalid_grant", err)
			}
			if c, _, _ := f.userinfo(first.AccessToken); c != 401 {
				t.Fatalf("first access token after replay: %d; want 401", c)
			}
			if _, err := f.conf.TokenSource(f.ctx, &oauth2.Token{RefreshToken: first.RefreshToken}).Token(); oauthErrorCode(err) != "invalid_grant" {
				t.Fatalf("first refresh token after replay: %v; want invalid_grant", err)
			}
		})
		t.Run("PKCE verifier mismatch", func(t *testing.T) {
			f := member()
			code := f.authorize(demo.StudentEmail, demo.StudentPassword)
			f.verifier = oauth2.GenerateVerifier()
			if _, err := f.exchange(code); oauthErrorCode(err) != "invalid_grant" {
				t.Fatalf("%v; want invalid_grant", err)
			}
		})
		t.Run("missing verifier", func(t *testing.T) {
			f := member()
			code := f.authorize(demo.StudentEmail, demo.StudentPassword)
			status, _, body := ts.postForm(t, token, url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {callback}, "client_id": {demo.MemberClientID}, "resource": {f.origin}})
			if status != 400 || body["error"] != "invalid_grant" {
				t.Fatalf("%d %v", status, body)
			}
		})
		t.Run("redirect_uri differs from the authorization request", func(t *testing.T) {
			f := member()
			code := f.authorize(demo.StudentEmail, demo.StudentPassword)
			f.conf.RedirectURL = "http://127.0.0.1:53682/other"
			if _, err := f.exchange(code); oauthErrorCode(err) != "invalid_grant" {
				t.Fatalf("%v; want invalid_grant", err)
			}
		})
		t.Run("resource mismatch between authorize and token", func(t *testing.T) {
			f := member()
			code := f.authorize(demo.StudentEmail, demo.StudentPassword)
			if _, err := f.exchange(code, oauth2.SetAuthURLParam("resource", ts.open())); oauthErrorCode(err) != "invalid_target" {
				t.Fatalf("%v; want invalid_target", err)
			}
		})
		t.Run("missing resource at the token endpoint for a member client", func(t *testing.T) {
			f := member()
			code := f.authorize(demo.StudentEmail, demo.StudentPassword)
			status, _, body := ts.postForm(t, token, url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {callback},
				"client_id": {demo.MemberClientID}, "code_verifier": {f.verifier}})
			if status != 400 || body["error"] != "invalid_target" {
				t.Fatalf("%d %v", status, body)
			}
		})
		t.Run("expired code", func(t *testing.T) {
			f := member()
			code := f.authorize(demo.StudentEmail, demo.StudentPassword)
			time.Sleep(1500 * time.Millisecond)
			if _, err := f.exchange(code); oauthErrorCode(err) != "invalid_grant" {
				t.Fatalf("%v; want invalid_grant", err)
			}
		})
		t.Run("refresh token reuse revokes the grant", func(t *testing.T) {
			f := member()
			tok, err := f.exchange(f.authorize(demo.StudentEmail, demo.StudentPassword))
			if err != nil {
				t.Fatal(err)
			}
			next, err := f.conf.TokenSource(f.ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.conf.TokenSource(f.ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token(); oauthErrorCode(err) != "invalid_grant" {
				t.Fatalf("reuse: %v; want invalid_grant", err)
			}
			if _, err := f.conf.TokenSource(f.ctx, &oauth2.Token{RefreshToken: next.RefreshToken}).Token(); oauthErrorCode(err) != "invalid_grant" {
				t.Fatalf("the rotated token after reuse: %v; want invalid_grant (grant revoked)", err)
			}
			if c, _, _ := f.userinfo(next.AccessToken); c != 401 {
				t.Fatalf("access token of the revoked grant: %d", c)
			}
		})
		t.Run("refresh cannot widen scopes", func(t *testing.T) {
			f := member()
			tok, _ := f.exchange(f.authorize(demo.StudentEmail, demo.StudentPassword))
			status, _, body := ts.postForm(t, token, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}, "client_id": {demo.MemberClientID}, "scope": {"openid account:write"}})
			if status != 400 || body["error"] != "invalid_scope" {
				t.Fatalf("%d %v", status, body)
			}
			// The refused request did not burn the token.
			if _, err := f.conf.TokenSource(f.ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token(); err != nil {
				t.Fatalf("refresh after a refused narrowing: %v", err)
			}
		})
		t.Run("unsupported grant types", func(t *testing.T) {
			for _, gt := range []string{"urn:ietf:params:oauth:grant-type:jwt-bearer", "urn:ietf:params:oauth:grant-type:token-exchange",
				"client_credentials", "password", "implicit", "urn:ietf:params:oauth:grant-type:device_code", "something"} {
				status, _, body := ts.postForm(t, token, url.Values{"grant_type": {gt}, "client_id": {demo.MemberClientID}, "assertion": {"x"}})
				if status != 400 || body["error"] != "unsupported_grant_type" {
					t.Errorf("%s: %d %v; want 400 unsupported_grant_type", gt, status, body)
				}
			}
		})
		t.Run("unknown client", func(t *testing.T) {
			status, _, body := ts.postForm(t, token, url.Values{"grant_type": {"authorization_code"}, "code": {"x"}, "redirect_uri": {callback}, "client_id": {"nobody"}})
			if status != 401 || body["error"] != "invalid_client" {
				t.Fatalf("%d %v", status, body)
			}
		})
		t.Run("JSON body", func(t *testing.T) {
			resp, err := ts.client.Post(token, "application/json", strings.NewReader(`{"grant_type":"authorization_code"}`))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 400 {
				t.Fatalf("%d", resp.StatusCode)
			}
		})
	})
}

// Confidential clients authenticate with client_secret_post; the secret is
// stored hashed.
func TestConfidentialClient(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	ctx := context.Background()
	site, _ := ts.app.Store.SiteBySlug(ctx, demo.AcademySlug)
	secret := "s3cret-" + randomB64()
	sum := sha256.Sum256([]byte(secret))
	c := demo.MemberClient(site.ID)
	c.ClientID, c.Type, c.SecretHash, c.Name = "confidential-app", storage.ClientConfidential, sum[:], "Confidential App"
	if err := ts.app.Store.CreateClient(ctx, c); err != nil {
		t.Fatal(err)
	}
	token := ts.academy() + vocab.TokenPath
	f := newFlow(t, ts, ts.academy(), "confidential-app", "openid", "account:read")
	f.conf.ClientSecret = secret
	code := f.authorize(demo.StudentEmail, demo.StudentPassword)
	for name, v := range map[string]url.Values{
		"no secret":    {"client_id": {"confidential-app"}},
		"wrong secret": {"client_id": {"confidential-app"}, "client_secret": {"wrong"}},
	} {
		v.Set("grant_type", "authorization_code")
		v.Set("code", "unused")
		v.Set("redirect_uri", callback)
		status, _, body := ts.postForm(t, token, v)
		if status != 401 || body["error"] != "invalid_client" {
			t.Errorf("%s: %d %v; want 401 invalid_client", name, status, body)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, token, strings.NewReader(url.Values{"grant_type": {"authorization_code"}, "code": {"x"}, "redirect_uri": {callback}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth("confidential-app", secret)
	resp, err := ts.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Fatalf("basic auth: %d; want 401 (only client_secret_post is advertised)", resp.StatusCode)
	}
	tok, err := f.exchange(code)
	if err != nil {
		t.Fatalf("exchange with client_secret_post: %v", err)
	}
	// Introspection shows the resource binding.
	status, _, body := ts.postForm(t, ts.academy()+vocab.IntrospectionPath, url.Values{"token": {tok.AccessToken}, "client_id": {"confidential-app"}, "client_secret": {secret}})
	if status != 200 || body["active"] != true || body["aud"] != ts.academy() || body["client_id"] != "confidential-app" || body["scope"] != "openid account:read" {
		t.Fatalf("introspection: %d %v", status, body)
	}
	status, _, body = ts.postForm(t, ts.academy()+vocab.IntrospectionPath, url.Values{"token": {tok.RefreshToken}, "client_id": {"confidential-app"}, "client_secret": {secret}})
	if status != 200 || body["active"] != true || body["token_type"] != "refresh_token" {
		t.Fatalf("refresh introspection: %d %v", status, body)
	}
	status, _, body = ts.postForm(t, ts.academy()+vocab.IntrospectionPath, url.Values{"token": {"garbage"}, "client_id": {"confidential-app"}, "client_secret": {secret}})
	if status != 200 || body["active"] != false || len(body) != 1 {
		t.Fatalf("garbage introspection: %d %v", status, body)
	}
	status, _, body = ts.postForm(t, ts.academy()+vocab.IntrospectionPath, url.Values{"token": {tok.AccessToken}, "client_id": {demo.MemberClientID}})
	if status != 401 || body["error"] != "invalid_client" {
		t.Fatalf("introspection by a public client: %d %v", status, body)
	}
	_ = scope.OpenID
}

// The form endpoints read the form body and nothing else: parameters in
// the URL query (which the OAuth library would prefer to the body's) and
// repeated parameters are invalid_request, and such a request changes
// nothing: the refresh token and the access token still work afterwards.
func TestFormEndpointsTakeTheBodyOnly(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	origin := ts.academy()
	tok := ts.studentToken(t, origin)
	refresh := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}, "client_id": {demo.MemberClientID}}
	revoke := url.Values{"token": {tok.AccessToken}, "client_id": {demo.MemberClientID}}
	for _, c := range []struct {
		name, path string
		body       url.Values
	}{
		{"token, client_id in the query too", vocab.TokenPath + "?client_id=" + demo.VendorClientID, refresh},
		{"token, everything in the query", vocab.TokenPath + "?" + refresh.Encode(), url.Values{"grant_type": {"refresh_token"}}},
		{"revocation in the query", vocab.RevocationPath + "?" + revoke.Encode(), url.Values{}},
		{"revocation, token twice", vocab.RevocationPath, url.Values{"token": {"junk", tok.AccessToken}, "client_id": {demo.MemberClientID}}},
		{"introspection, secret in the query", vocab.IntrospectionPath + "?client_secret=x", url.Values{"token": {tok.AccessToken}, "client_id": {"x"}, "client_secret": {"y"}}},
		{"introspection, token twice", vocab.IntrospectionPath, url.Values{"token": {"junk", tok.AccessToken}, "client_id": {"x"}, "client_secret": {"y"}}},
	} {
		code, _, body := ts.postForm(t, origin+c.path, c.body)
		if code != http.StatusBadRequest || body["error"] != "invalid_request" {
			t.Errorf("%s: %d %v; want 400 invalid_request", c.name, code, body)
		}
	}
	if code, _, body := ts.postForm(t, origin+vocab.TokenPath, refresh); code != http.StatusOK {
		t.Fatalf("the refresh token after the refused requests: %d %v", code, body)
	}
	if code := webUserinfoStatus(t, ts, tok.AccessToken); code != http.StatusOK {
		t.Fatalf("the access token after the refused revocations: %d", code)
	}
}
