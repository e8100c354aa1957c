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
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/vocab"
)

func TestTokenErrors(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, &serverOptions{configure: nil})
		ts.srv.Auth().SetCodeLifetime(time.Second)
		token := ts.academy() + vocab.TokenPath
		member := func() *flow { return newFlow(t, ts, ts.academy(), demo.MemberClientID, "openid", "account:read") }
		// studentTokens is a member flow and the student's tokens from it.
		studentTokens := func(t *testing.T) (*flow, *oauth2.Token) {
			t.Helper()
			f := member()
			tok, err := f.exchange(f.authorize(demo.StudentEmail, demo.StudentPassword))
			if err != nil {
				t.Fatal(err)
			}
			return f, tok
		}
		// refreshed is the answer to a refresh with rt.
		refreshed := func(t *testing.T, f *flow, rt string) *oauth2.Token {
			t.Helper()
			next, err := f.conf.TokenSource(f.ctx, &oauth2.Token{RefreshToken: rt}).Token()
			if err != nil {
				t.Fatal(err)
			}
			return next
		}

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
			f, tok := studentTokens(t)
			next := refreshed(t, f, tok.RefreshToken)
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
		t.Run("a replay asking for a scope still revokes the grant", func(t *testing.T) {
			f, tok := studentTokens(t)
			next := refreshed(t, f, tok.RefreshToken)
			// A wider scope (or a resource) on the replay must not turn the
			// replay into a scope error that leaves the grant alive and
			// tells the holder what the grant has.
			for _, extra := range []url.Values{{"scope": {"openid account:write"}}, {"resource": {ts.open()}}} {
				form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}, "client_id": {demo.MemberClientID}}
				for k, v := range extra {
					form[k] = v
				}
				if status, _, body := ts.postForm(t, token, form); status != 400 || body["error"] != "invalid_grant" {
					t.Fatalf("replay with %v: %d %v; want invalid_grant", extra, status, body)
				}
			}
			if _, err := f.conf.TokenSource(f.ctx, &oauth2.Token{RefreshToken: next.RefreshToken}).Token(); oauthErrorCode(err) != "invalid_grant" {
				t.Fatalf("the rotated token after a replay with a scope: %v; want invalid_grant (grant revoked)", err)
			}
		})
		t.Run("another client's refresh token asking for a scope revokes the grant", func(t *testing.T) {
			f, tok := studentTokens(t)
			status, _, body := ts.postForm(t, token, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken},
				"client_id": {demo.VendorClientID}, "scope": {"openid account:write"}})
			if status != 400 || body["error"] != "invalid_grant" {
				t.Fatalf("%d %v; want invalid_grant", status, body)
			}
			if _, err := f.conf.TokenSource(f.ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token(); oauthErrorCode(err) != "invalid_grant" {
				t.Fatalf("the owner's refresh after the theft: %v; want invalid_grant (grant revoked)", err)
			}
		})
		t.Run("an empty or doubly spaced scope on refresh", func(t *testing.T) {
			f, tok := studentTokens(t)
			rt := tok.RefreshToken
			for _, sc := range []string{"", "openid  account:read", " openid "} {
				status, _, body := ts.postForm(t, token, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}, "client_id": {demo.MemberClientID}, "resource": {f.origin}, "scope": {sc}})
				if status != 200 {
					t.Fatalf("scope %q: %d %v", sc, status, body)
				}
				rt, _ = body["refresh_token"].(string)
			}
		})
		t.Run("unsupported grant types", func(t *testing.T) {
			status, _, body := ts.postForm(t, token, url.Values{"grant_type": {strings.Repeat("a", 100_000)}, "client_id": {demo.MemberClientID}})
			if d, _ := body["error_description"].(string); status != 400 || body["error"] != "unsupported_grant_type" || len(d) > 300 {
				t.Errorf("a 100 kB grant_type: %d, %d bytes of description", status, len(d))
			}
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
	// HTTP Basic is refused (only client_secret_post is advertised), and,
	// RFC 6749 §5.2, the 401 to a client that authenticated in the
	// Authorization header challenges the scheme it used, at each endpoint
	// that authenticates clients; one that did not gets no challenge.
	for _, path := range []string{vocab.TokenPath, vocab.IntrospectionPath, vocab.RevocationPath} {
		form := url.Values{"grant_type": {"authorization_code"}, "code": {"x"}, "redirect_uri": {callback}, "token": {"x"}}
		req, _ := http.NewRequest(http.MethodPost, ts.academy()+path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth("confidential-app", secret)
		resp, err := ts.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if want := `Basic realm="` + ts.academy() + `"`; resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") != want {
			t.Errorf("%s with HTTP Basic: %d WWW-Authenticate %q; want 401 %q", path, resp.StatusCode, resp.Header.Get("WWW-Authenticate"), want)
		}
	}
	status, hdr, _ := ts.postForm(t, token, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"x"}, "client_id": {"confidential-app"}, "client_secret": {"wrong"}})
	if status != 401 || hdr.Get("WWW-Authenticate") != "" {
		t.Errorf("client_secret_post with a wrong secret: %d WWW-Authenticate %q; want 401 without a challenge", status, hdr.Get("WWW-Authenticate"))
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

// A request that names no client is told how clients identify themselves
// here (client_id, with client_secret for a confidential one), not pointed
// at client assertions, which this server refuses.
func TestRequestsWithoutAClient(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	for _, tt := range []struct {
		name, path string
		form       url.Values
		status     int
		code       string
	}{
		{"token", vocab.TokenPath, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"x"}}, 400, "invalid_request"},
		{"token, a secret but no client_id", vocab.TokenPath, url.Values{"grant_type": {"authorization_code"}, "code": {"x"}, "client_secret": {"s"}}, 400, "invalid_request"},
		{"revocation", vocab.RevocationPath, url.Values{"token": {"x"}}, 400, "invalid_request"},
		{"introspection, a secret but no client_id", vocab.IntrospectionPath, url.Values{"token": {"x"}, "client_secret": {"s"}}, 401, "invalid_client"},
	} {
		status, _, body := ts.postForm(t, ts.academy()+tt.path, tt.form)
		desc, _ := body["error_description"].(string)
		if status != tt.status || body["error"] != tt.code || !strings.Contains(desc, "client_id") || strings.Contains(desc, "assertion") {
			t.Errorf("%s: %d %v; want %d %s naming client_id", tt.name, status, body, tt.status, tt.code)
		}
	}
}

// A token of one site is refused by the other, and the other way round.
func TestTokensAreBoundToTheirSite(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, nil)
		for _, pair := range [][2]string{{ts.academy(), ts.open()}, {ts.open(), ts.academy()}} {
			f := newFlow(t, ts, pair[0], demo.MemberClientID, "openid", "account:read")
			tok, err := f.exchange(f.authorize(demo.StudentEmail, demo.StudentPassword))
			if err != nil {
				t.Fatal(err)
			}
			if code, _, _ := f.userinfo(tok.AccessToken); code != 200 {
				t.Fatalf("%s token at its own site: %d", pair[0], code)
			}
			code, hdr, body := ts.bearerGet(t, pair[1]+vocab.UserInfoPath, tok.AccessToken)
			wa := hdr.Get("WWW-Authenticate")
			if code != 401 || body["error"] != "invalid_token" || !strings.Contains(wa, `resource_metadata="`+pair[1]+vocab.ProtectedResourcePath+`"`) || !strings.Contains(wa, `error="invalid_token"`) {
				t.Fatalf("%s token at %s: %d %v %q; want 401 invalid_token pointing at %s's metadata", pair[0], pair[1], code, body, wa, pair[1])
			}
		}
	})
}

func TestIDTokensDisabled(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	ctx := context.Background()
	s, _ := ts.app.Store.SiteBySlug(ctx, demo.AcademySlug)
	s.IDTokensEnabled = false
	if err := ts.app.Platform.UpdateSite(ctx, s); err != nil {
		t.Fatal(err)
	}
	var meta map[string]any
	ts.getJSON(t, ts.academy(), vocab.AuthorizationServerPath, 200, &meta)
	if _, ok := meta["id_token_signing_alg_values_supported"]; ok {
		t.Fatal("metadata still lists id_token_signing_alg_values_supported")
	}
	if _, ok := meta["jwks_uri"]; ok {
		t.Fatal("metadata still lists jwks_uri")
	}
	f := newFlow(t, ts, ts.academy(), demo.MemberClientID, "openid", "email")
	tok, err := f.exchange(f.authorize(demo.StudentEmail, demo.StudentPassword))
	if err != nil {
		t.Fatal(err)
	}
	if tok.Extra("id_token") != nil {
		t.Fatal("an id_token was issued by a site with id_tokens disabled")
	}
	if code, _, info := f.userinfo(tok.AccessToken); code != 200 || info["email"] != demo.StudentEmail {
		t.Fatalf("userinfo still serves the claims: %d %v", code, info)
	}
}
