package integration

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
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

// callback is the demo clients' loopback redirect URI on an ephemeral port.
const callback = "http://127.0.0.1:53682/callback"

// flow is one client's view of an authorization at one site.
type flow struct {
	t        *testing.T
	ts       *testServer
	origin   string
	conf     *oauth2.Config
	verifier string
	state    string
	nonce    string
	browser  *oauthtest.Browser
	ctx      context.Context
}

func newFlow(t *testing.T, ts *testServer, origin, clientID string, scopes ...string) *flow {
	f := &flow{
		t: t, ts: ts, origin: origin,
		conf: &oauth2.Config{
			ClientID: clientID, RedirectURL: callback, Scopes: scopes,
			Endpoint: oauth2.Endpoint{AuthURL: origin + vocab.AuthorizePath, TokenURL: origin + vocab.TokenPath, AuthStyle: oauth2.AuthStyleInParams},
		},
		verifier: oauth2.GenerateVerifier(), state: randomB64(), nonce: randomB64(),
		browser: oauthtest.NewBrowser(ts.addr),
	}
	f.ctx = context.WithValue(context.Background(), oauth2.HTTPClient, ts.client)
	return f
}

func randomB64() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// authURL is the authorization URL x/oauth2 builds, with PKCE S256,
// resource (RFC 8707) and nonce.
func (f *flow) authURL(extra ...oauth2.AuthCodeOption) string {
	opts := append([]oauth2.AuthCodeOption{
		oauth2.S256ChallengeOption(f.verifier),
		oauth2.SetAuthURLParam("resource", f.origin),
		oauth2.SetAuthURLParam("nonce", f.nonce),
	}, extra...)
	return f.conf.AuthCodeURL(f.state, opts...)
}

// authorize signs in as email and approves, returning the code.
func (f *flow) authorize(email, password string, extra ...oauth2.AuthCodeOption) string {
	f.t.Helper()
	out, err := f.browser.Authorize(f.authURL(extra...), oauthtest.Options{Email: email, Password: password})
	if err != nil {
		f.t.Fatal(err)
	}
	code, err := out.Code()
	if err != nil {
		f.t.Fatal(err)
	}
	q := out.Redirect.Query()
	if q.Get("state") != f.state || q.Get("iss") != f.origin {
		f.t.Fatalf("redirect state %q iss %q; want %q and the issuer %q (RFC 9207)", q.Get("state"), q.Get("iss"), f.state, f.origin)
	}
	return code
}

func (f *flow) exchange(code string, extra ...oauth2.AuthCodeOption) (*oauth2.Token, error) {
	opts := append([]oauth2.AuthCodeOption{oauth2.VerifierOption(f.verifier), oauth2.SetAuthURLParam("resource", f.origin)}, extra...)
	return f.conf.Exchange(f.ctx, code, opts...)
}

// userinfo calls the userinfo endpoint with an access token.
func (f *flow) userinfo(accessToken string) (int, http.Header, map[string]any) {
	f.t.Helper()
	return f.ts.bearerGet(f.t, f.origin+vocab.UserInfoPath, accessToken)
}

func (ts *testServer) bearerGet(t *testing.T, u, accessToken string) (int, http.Header, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	req.Header.Set("Authorization", "Bearer "+accessToken)
	resp, err := ts.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&body)
	return resp.StatusCode, resp.Header, body
}

// postForm posts to an endpoint of origin and decodes the JSON answer.
func (ts *testServer) postForm(t *testing.T, u string, v url.Values) (int, http.Header, map[string]any) {
	t.Helper()
	resp, err := ts.client.PostForm(u, v)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&body)
	return resp.StatusCode, resp.Header, body
}

func oauthErrorCode(err error) string {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		return re.ErrorCode
	}
	return ""
}

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

var _ = fmt.Sprint
