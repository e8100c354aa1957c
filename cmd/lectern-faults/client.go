package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/oauth2"

	"github.com/lectern/lectern/internal/demo"
	"github.com/lectern/lectern/internal/oauthtest"
	"github.com/lectern/lectern/vocab"
)

// redirectURI is the bench clients' loopback redirect; it is never
// requested (the browser stops at the client's origin).
const redirectURI = "http://127.0.0.1:53682/callback"

// client is the driver's view of Demo Academy through one address (nginx
// or one replica): a signed-in browser for the authorization endpoint and
// x/oauth2 for the token endpoint.
type client struct {
	origin  string // the site's origin, http://localhost:<front port>
	hc      *http.Client
	browser *oauthtest.Browser
	// signIn serialises sign-ins: after the cache lost the session every
	// worker would otherwise sign in at once.
	signIn sync.Mutex
}

// newClient dials addr whatever the URL's host, so the Host header names
// the site as a browser's would.
func newClient(origin, addr string) *client {
	jar, _ := cookiejar.New(nil)
	d := &net.Dialer{Timeout: 3 * time.Second}
	hc := &http.Client{
		Jar:     jar,
		Timeout: 15 * time.Second,
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return d.DialContext(ctx, network, addr)
			},
			MaxIdleConns: 256, MaxIdleConnsPerHost: 256, IdleConnTimeout: 30 * time.Second,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return &client{origin: origin, hc: hc, browser: &oauthtest.Browser{Client: hc}}
}

// withSession is a client on another address sharing c's cookies (the
// session lives in the shared cache, so any replica honours it).
func (c *client) withAddr(addr string) *client {
	n := newClient(c.origin, addr)
	n.hc.Jar = c.hc.Jar
	n.browser = &oauthtest.Browser{Client: n.hc}
	return n
}

func (c *client) oauth(clientID string) *oauth2.Config {
	return &oauth2.Config{
		ClientID:    clientID,
		RedirectURL: redirectURI,
		Scopes:      []string{"openid", "profile", "email", "account:read"},
		Endpoint: oauth2.Endpoint{
			AuthURL: c.origin + vocab.AuthorizePath, TokenURL: c.origin + vocab.TokenPath, AuthStyle: oauth2.AuthStyleInParams,
		},
	}
}

func (c *client) ctx(ctx context.Context) context.Context {
	return context.WithValue(ctx, oauth2.HTTPClient, c.hc)
}

// outcome names what an attempt got: "200", "400 invalid_grant", "503",
// "refused", "conn" (no answer: reset or closed), "timeout".
type outcome string

const (
	outOK      outcome = "200"
	outConn    outcome = "conn"    // no answer on a connection that was open: reset, closed
	outRefused outcome = "refused" // nothing listens: a connection never opened
	outTimeout outcome = "timeout"
	// outSignedInAgain: the session was gone (the cache lost it) and the
	// person signed in again before the code came.
	outSignedInAgain outcome = "200 after signing in again"
)

func transportOutcome(err error) outcome {
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		return outTimeout
	case errors.Is(err, syscall.ECONNREFUSED):
		return outRefused
	}
	return outConn
}

func statusOutcome(code int, oauthErr string) outcome {
	if oauthErr != "" {
		return outcome(strconv.Itoa(code) + " " + oauthErr)
	}
	return outcome(strconv.Itoa(code))
}

// is5xx reports an answer that is neither success nor a client error.
func (o outcome) status() int {
	n, _ := strconv.Atoi(strings.Fields(string(o) + " ")[0])
	return n
}

// authorize runs the authorization request with the signed-in browser
// (signing in again when the session is gone) and returns the code.
func (c *client) authorize(clientID string) (code, verifier string, out outcome) {
	verifier = oauth2.GenerateVerifier()
	u := c.oauth(clientID).AuthCodeURL(randText(), oauth2.S256ChallengeOption(verifier),
		oauth2.SetAuthURLParam("resource", c.origin), oauth2.SetAuthURLParam("nonce", randText()))
	resp, err := c.hc.Get(u)
	if err != nil {
		return "", "", transportOutcome(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound && resp.StatusCode != http.StatusSeeOther {
		return "", "", statusOutcome(resp.StatusCode, "")
	}
	loc, err := resp.Request.URL.Parse(resp.Header.Get("Location"))
	if err != nil {
		return "", "", "bad redirect"
	}
	if strings.HasPrefix(loc.String(), redirectURI) {
		if e := loc.Query().Get("error"); e != "" {
			return "", "", outcome("redirect " + e)
		}
		return loc.Query().Get("code"), verifier, outOK
	}
	// The session is gone (the cache lost it): sign in again, one worker
	// at a time, through the real form.
	c.signIn.Lock()
	defer c.signIn.Unlock()
	o, err := c.browser.Authorize(u, oauthtest.Options{Email: demo.StudentEmail, Password: demo.StudentPassword})
	if err != nil {
		return "", "", transportOutcome(err)
	}
	if o.Redirect == nil {
		return "", "", outcome("signin " + strconv.Itoa(o.Page.Status))
	}
	code, err = o.Code()
	if err != nil {
		return "", "", outcome("redirect error")
	}
	return code, verifier, outSignedInAgain
}

// tokenOutcome classifies an x/oauth2 error.
func tokenOutcome(err error) outcome {
	if err == nil {
		return outOK
	}
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		return statusOutcome(re.Response.StatusCode, re.ErrorCode)
	}
	return transportOutcome(err)
}

// exchange redeems code with x/oauth2.
func (c *client) exchange(ctx context.Context, clientID, code, verifier string) (*oauth2.Token, outcome) {
	tok, err := c.oauth(clientID).Exchange(c.ctx(ctx), code, oauth2.VerifierOption(verifier), oauth2.SetAuthURLParam("resource", c.origin))
	return tok, tokenOutcome(err)
}

// refresh uses refresh token rt once, with x/oauth2.
func (c *client) refresh(ctx context.Context, clientID, rt string) (*oauth2.Token, outcome) {
	tok, err := c.oauth(clientID).TokenSource(c.ctx(ctx), &oauth2.Token{RefreshToken: rt}).Token()
	return tok, tokenOutcome(err)
}

// userinfo calls the UserInfo endpoint with an access token.
func (c *client) userinfo(ctx context.Context, at string) outcome {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.origin+vocab.UserInfoPath, nil)
	req.Header.Set("Authorization", "Bearer "+at)
	return c.do(req)
}

// revoke revokes a token (RFC 7009) as the public client.
func (c *client) revoke(ctx context.Context, clientID, token string) outcome {
	form := url.Values{"token": {token}, "client_id": {clientID}}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, c.origin+vocab.RevocationPath, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return c.do(req)
}

func (c *client) do(req *http.Request) outcome {
	resp, err := c.hc.Do(req)
	if err != nil {
		return transportOutcome(err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	return statusOutcome(resp.StatusCode, "")
}

// get fetches path on the site and returns status and body.
func (c *client) get(path string) (int, string, error) {
	resp, err := c.hc.Get(c.origin + path)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	return resp.StatusCode, string(b), err
}

// flow is a whole code flow: authorize, then the exchange, retried with the
// same code while the answer is 503 or none (defect 2: a 503 must not burn
// the code).
func (c *client) flow(ctx context.Context, clientID string) (tok *oauth2.Token, steps []outcome) {
	code, v, out := c.authorize(clientID)
	steps = append(steps, "authorize "+out)
	if out != outOK && out != outSignedInAgain {
		return nil, steps
	}
	for attempt := 0; attempt < 20 && ctx.Err() == nil; attempt++ {
		tok, out = c.exchange(ctx, clientID, code, v)
		steps = append(steps, "exchange "+out)
		if out == outOK || (out.status() != 503 && out != outConn && out != outRefused && out != outTimeout) {
			return tok, steps
		}
		time.Sleep(150 * time.Millisecond)
	}
	return nil, steps
}

func randText() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// idTokenKID is the kid of a token's JWS header, to tell keys apart.
func idTokenKID(jwt string) string {
	h, _, ok := strings.Cut(jwt, ".")
	if !ok {
		return ""
	}
	b, err := base64.RawURLEncoding.DecodeString(h)
	if err != nil {
		return ""
	}
	s := string(b)
	i := strings.Index(s, `"kid":"`)
	if i < 0 {
		return ""
	}
	s = s[i+7:]
	j := strings.IndexByte(s, '"')
	if j < 0 {
		return ""
	}
	return s[:j]
}

func oauth2S256() oauth2.AuthCodeOption {
	return oauth2.S256ChallengeOption(oauth2.GenerateVerifier())
}

func resourceParam(origin string) oauth2.AuthCodeOption {
	return oauth2.SetAuthURLParam("resource", origin)
}
