package integration

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/lectern/lectern/internal/demo"
	"github.com/lectern/lectern/internal/oauthtest"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/vocab"
)

// webPerson is a signed-in browser (cookie jar) at one site.
type webPerson struct {
	t      *testing.T
	ts     *testServer
	origin string
	b      *oauthtest.Browser
}

// webSignIn signs email in at origin through the real sign-in form.
func webSignIn(t *testing.T, ts *testServer, origin, email, password string) *webPerson {
	t.Helper()
	p := &webPerson{t: t, ts: ts, origin: origin, b: oauthtest.NewBrowser(ts.addr)}
	page := p.get("/login")
	f, err := oauthtest.ParseForm(page.Body, "login-form")
	if err != nil {
		t.Fatal(err)
	}
	f.Values.Set("email", email)
	f.Values.Set("password", password)
	res := p.post("/login", f.Values)
	if res.Status != http.StatusSeeOther {
		t.Fatalf("sign-in of %s: status %d\n%s", email, res.Status, res.Body)
	}
	return p
}

// webAnonymous is a browser without a session.
func webAnonymous(t *testing.T, ts *testServer, origin string) *webPerson {
	return &webPerson{t: t, ts: ts, origin: origin, b: oauthtest.NewBrowser(ts.addr)}
}

func (p *webPerson) get(path string) *oauthtest.Page {
	p.t.Helper()
	page, err := p.b.Get(p.origin + path)
	if err != nil {
		p.t.Fatal(err)
	}
	return page
}

func (p *webPerson) post(path string, v url.Values) *oauthtest.Page {
	p.t.Helper()
	page, err := p.b.PostForm(p.origin+path, v)
	if err != nil {
		p.t.Fatal(err)
	}
	return page
}

// untilConsent follows the authorization request u while it redirects
// within the site at origin and returns the page it stops at; a redirect
// that leaves the site (straight back to the app) fails the test.
func (p *webPerson) untilConsent(t *testing.T, origin, u string) *oauthtest.Page {
	t.Helper()
	var last *oauthtest.Page
	for range 5 {
		last = p.getURL(u)
		if last.Status < 300 || last.Status >= 400 {
			break
		}
		loc, _ := last.URL.Parse(last.Header.Get("Location"))
		if !strings.HasPrefix(loc.String(), origin) {
			t.Fatalf("the authorization went straight back to the app without asking: %s", loc)
		}
		u = loc.String()
	}
	if !strings.Contains(last.Body, `id="consent-form"`) {
		t.Fatalf("no consent page:\n%s", webExcerpt(last.Body))
	}
	return last
}

// getURL fetches an absolute URL with the person's cookies.
func (p *webPerson) getURL(u string) *oauthtest.Page {
	p.t.Helper()
	page, err := p.b.Get(u)
	if err != nil {
		p.t.Fatal(err)
	}
	return page
}

// expect fetches path and fails unless the status is want.
func (p *webPerson) expect(path string, want int) *oauthtest.Page {
	p.t.Helper()
	page := p.get(path)
	if page.Status != want {
		p.t.Fatalf("GET %s: status %d, want %d\n%s", path, page.Status, want, webExcerpt(page.Body))
	}
	return page
}

// expectPost posts and fails unless the status is want.
func (p *webPerson) expectPost(path string, v url.Values, want int) *oauthtest.Page {
	p.t.Helper()
	page := p.post(path, v)
	if page.Status != want {
		p.t.Fatalf("POST %s: status %d, want %d\n%s", path, page.Status, want, webExcerpt(page.Body))
	}
	return page
}

var webCSRFField = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// csrf is the session's anti-forgery token, read from a page's form.
func (p *webPerson) csrf() string {
	p.t.Helper()
	page := p.expect("/account/connections", http.StatusOK)
	m := webCSRFField.FindStringSubmatch(page.Body)
	if m == nil {
		p.t.Fatalf("no csrf_token on /account/connections:\n%s", webExcerpt(page.Body))
	}
	return m[1]
}

// form returns the values of a form on page path, with the overrides set.
func (p *webPerson) form(path, formID string, set url.Values) url.Values {
	p.t.Helper()
	f, err := oauthtest.ParseForm(p.expect(path, http.StatusOK).Body, formID)
	if err != nil {
		p.t.Fatal(err)
	}
	for k, vs := range set {
		f.Values[k] = vs
	}
	return f.Values
}

// setBeta turns the "MCP connections" beta on or off through the settings
// form.
func (p *webPerson) setBeta(on bool) {
	p.t.Helper()
	v := p.form("/admin/settings", "beta-form", nil)
	want := "off"
	if on {
		want = "on"
	}
	if v.Get("enabled") != want {
		p.t.Fatalf("the settings form offers enabled=%q, want %q", v.Get("enabled"), want)
	}
	res := p.expectPost("/admin/settings/beta", v, http.StatusSeeOther)
	if loc := res.Header.Get("Location"); loc != "/admin/settings" {
		p.t.Fatalf("after the beta toggle: Location %q", loc)
	}
}

// webAppValues are the fields of the application form.
func webAppValues(csrf, name, redirects, typ string, scopes ...string) url.Values {
	v := url.Values{"csrf_token": {csrf}, "name": {name}, "redirect_uris": {redirects}, "scope": scopes}
	if typ != "" {
		v.Set("type", typ)
	}
	return v
}

// createApp creates a member application through the form and returns its
// client ID and, for a confidential one, the secret shown once.
func (p *webPerson) createApp(name, typ, redirects string, scopes ...string) (clientID, secret string) {
	p.t.Helper()
	res := p.expectPost("/admin/developers/apps", webAppValues(p.csrf(), name, redirects, typ, scopes...), http.StatusSeeOther)
	loc := res.Header.Get("Location")
	if !strings.HasPrefix(loc, "/admin/developers/apps/") {
		p.t.Fatalf("after creating an application: Location %q", loc)
	}
	page := p.expect(loc, http.StatusOK)
	clientID = webTextByID(p.t, page.Body, "client-id")
	if "/admin/developers/apps/"+url.PathEscape(clientID) != loc {
		p.t.Fatalf("the page at %s shows client ID %q", loc, clientID)
	}
	if typ == "confidential" {
		secret = webTextByID(p.t, page.Body, "client-secret")
	}
	return clientID, secret
}

// webTextByID returns the text inside the element with id, failing when
// there is none.
func webTextByID(t *testing.T, body, id string) string {
	t.Helper()
	n := webFindByID(t, body, id)
	if n == nil {
		t.Fatalf("no element #%s on the page:\n%s", id, webExcerpt(body))
	}
	var buf bytes.Buffer
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			buf.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return strings.Join(strings.Fields(buf.String()), " ")
}

// webHasID reports whether the page has an element with id.
func webHasID(t *testing.T, body, id string) bool {
	t.Helper()
	return webFindByID(t, body, id) != nil
}

func webFindByID(t *testing.T, body, id string) *html.Node {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var find func(*html.Node) *html.Node
	find = func(n *html.Node) *html.Node {
		if n.Type == html.ElementNode {
			for _, a := range n.Attr {
				if a.Key == "id" && a.Val == id {
					return n
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if f := find(c); f != nil {
				return f
			}
		}
		return nil
	}
	return find(doc)
}

func webExcerpt(s string) string {
	if i := strings.Index(s, "<main"); i >= 0 {
		s = s[i:]
	}
	if len(s) > 1500 {
		return s[:1500] + "…"
	}
	return s
}

// webMemberToken authorizes clientID (secret for a confidential one) for
// the demo student through the login and consent pages, and exchanges the
// code.
func webMemberToken(t *testing.T, ts *testServer, clientID, secret string, scopes ...string) string {
	t.Helper()
	f := newFlow(t, ts, ts.academy(), clientID, scopes...)
	f.conf.ClientSecret = secret
	tok, err := f.exchange(f.authorize(demo.StudentEmail, demo.StudentPassword))
	if err != nil {
		t.Fatalf("token for %s: %v", clientID, err)
	}
	return tok.AccessToken
}

// webUserinfoStatus is the status of userinfo with the token.
func webUserinfoStatus(t *testing.T, ts *testServer, token string) int {
	t.Helper()
	code, _, _ := ts.bearerGet(t, ts.academy()+vocab.UserInfoPath, token)
	return code
}

// webGraphQL posts { viewer { email } } to /member/graphql with the token
// and returns the status and body.
func webGraphQL(t *testing.T, ts *testServer, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, ts.academy()+vocab.MemberGraphQLPath, strings.NewReader(`{"query":"{ viewer { email } }"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := ts.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	return resp.StatusCode, buf.String()
}

// webAcademy is the stored Demo Academy.
func webAcademy(t *testing.T, ts *testServer) *storage.Site {
	t.Helper()
	s, err := ts.app.Store.SiteBySlug(context.Background(), demo.AcademySlug)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// webAuditActions returns the actions of the academy's latest audit events.
func webAuditActions(t *testing.T, ts *testServer) []string {
	t.Helper()
	events, err := ts.app.Store.ListAudit(context.Background(), webAcademy(t, ts).ID, 0, 200)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = e.Action
	}
	return out
}

// webAppNames lists the academy's applications by name, sorted.
func webAppNames(t *testing.T, ts *testServer) []string {
	t.Helper()
	apps, err := ts.app.Platform.Applications(context.Background(), webAcademy(t, ts).ID)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range apps {
		names = append(names, a.Name)
	}
	slices.Sort(names)
	return names
}

// webMCPCall calls the member tool my_enrollments at Demo Academy's /mcp
// with token.
func webMCPCall(t *testing.T, ts *testServer, token string) (int, string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"my_enrollments","arguments":{}}}`
	req, err := http.NewRequest(http.MethodPost, ts.academy()+vocab.MCPPath, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := ts.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	return resp.StatusCode, buf.String()
}
