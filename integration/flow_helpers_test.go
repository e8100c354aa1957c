package integration

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"testing"

	"golang.org/x/oauth2"

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
