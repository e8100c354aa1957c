package integration

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/lectern/lectern/internal/demo"
	"github.com/lectern/lectern/internal/oauthtest"
	"github.com/lectern/lectern/internal/server"
	"github.com/lectern/lectern/limits"
)

// withLimits is a serverOptions whose platform defaults are set as given.
func withLimits(set map[limits.Name]int, more ...func(*server.Config)) *serverOptions {
	return &serverOptions{configure: func(c *server.Config) {
		c.Limits.Defaults = set
		for _, f := range more {
			f(c)
		}
	}}
}

// browserFromIP is a cookie-keeping browser whose connections leave from ip (a
// loopback address such as 127.0.3.7), so the server sees a client of its
// own.
func browserFromIP(ts *testServer, ip string) *oauthtest.Browser {
	b := oauthtest.NewBrowser(ts.addr)
	d := &net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	addr := ts.addr
	b.Client.Transport = &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return d.DialContext(ctx, network, addr)
	}}
	return b
}

// signInForm fetches the sign-in form of origin from ip and returns the
// browser and the form's values with email and password filled in, ready
// to post.
func signInForm(t *testing.T, ts *testServer, origin, ip, email, password string) (*oauthtest.Browser, url.Values) {
	t.Helper()
	b := browserFromIP(ts, ip)
	page, err := b.Get(origin + "/login")
	if err != nil {
		t.Fatal(err)
	}
	f, err := oauthtest.ParseForm(page.Body, "login-form")
	if err != nil {
		t.Fatal(err)
	}
	f.Values.Set("email", email)
	f.Values.Set("password", password)
	return b, f.Values
}

// signInFrom posts the sign-in form of origin from ip.
func signInFrom(t *testing.T, ts *testServer, origin, ip, email, password string) *oauthtest.Page {
	t.Helper()
	b, v := signInForm(t, ts, origin, ip, email, password)
	page, err := b.PostForm(origin+"/login", v)
	if err != nil {
		t.Fatal(err)
	}
	return page
}

// anonymousAuthorize starts an authorization at origin from ip without a
// session and returns the server's answer (302 to /login when it stored
// the request).
func anonymousAuthorize(t *testing.T, ts *testServer, origin, ip string, q url.Values) *oauthtest.Page {
	t.Helper()
	v := url.Values{
		"response_type": {"code"}, "client_id": {demo.MemberClientID}, "redirect_uri": {callback},
		"scope": {"openid account:read"}, "state": {randomB64()}, "nonce": {randomB64()},
		"code_challenge": {"E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"}, "code_challenge_method": {"S256"},
		"resource": {origin},
	}
	for k, vs := range q {
		v[k] = vs
	}
	page, err := browserFromIP(ts, ip).Get(origin + "/oauth/authorize?" + v.Encode())
	if err != nil {
		t.Fatal(err)
	}
	return page
}

// auditCount counts the audit events of action at the site of origin.
func auditCount(t *testing.T, ts *testServer, slug, action string) int {
	t.Helper()
	site, err := ts.app.Store.SiteBySlug(context.Background(), slug)
	if err != nil {
		t.Fatal(err)
	}
	events, err := ts.app.Store.ListAudit(context.Background(), site.ID, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range events {
		if e.Action == action {
			n++
		}
	}
	return n
}

// setProviderLimits gives the site of slug the provider's limits, as
// `lectern site update --limit` does.
func setProviderLimits(t *testing.T, ts *testServer, slug string, m map[string]int) {
	t.Helper()
	ctx := context.Background()
	site, err := ts.app.Store.SiteBySlug(ctx, slug)
	if err != nil {
		t.Fatal(err)
	}
	site.SetProviderLimits(m)
	if err := ts.app.Platform.UpdateSite(ctx, site); err != nil {
		t.Fatal(err)
	}
}

func hasText(page *oauthtest.Page, s string) bool { return strings.Contains(page.Body, s) }
