package integration

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lectern/lectern/internal/mailpit"
	"github.com/lectern/lectern/internal/oauthtest"
	"github.com/lectern/lectern/internal/server"
	"github.com/lectern/lectern/mail"
	"github.com/lectern/lectern/tenant"
)

// One Mailpit for the package on free loopback ports, started by the
// first account test and stopped by TestMain.
var (
	accountMailOnce sync.Once
	accountMail     *mailpit.Server
	accountMailErr  error
)

func accountMailpit(t *testing.T) *mailpit.Server {
	t.Helper()
	accountMailOnce.Do(func() { accountMail, accountMailErr = mailpit.Start(0, 0) })
	if accountMailErr != nil {
		if mailpit.Required() {
			t.Fatalf("Mailpit is required (LECTERN_REQUIRE_SERVICES=1): %v", accountMailErr)
		}
		t.Skipf("skipping: no Mailpit (%v)", accountMailErr)
	}
	return accountMail
}

func stopAccountMailpit() {
	if accountMail != nil {
		accountMail.Close()
	}
}

// accountServer is a test server whose mail goes to Mailpit, with a sender
// loop that retries quickly.
func accountServer(t *testing.T, b backend, more func(*server.Config)) (*testServer, *mailpit.Server) {
	t.Helper()
	mp := accountMailpit(t)
	ts := startServer(t, b, &serverOptions{configure: func(c *server.Config) {
		c.SMTPURL = mp.SMTPURL()
		c.MailFrom = "no-reply@lectern.test"
		c.Mail = &mail.SenderOptions{Poll: 100 * time.Millisecond, Backoff: 200 * time.Millisecond, MaxBackoff: time.Second}
		if more != nil {
			more(c)
		}
	}})
	return ts, mp
}

// uniqueEmail is an address no other test (or earlier run) mails.
func uniqueEmail(who string) string {
	return who + "-" + randomHex(6) + "@example.test"
}

// mailTo waits for the n-th message to address (1-based).
func mailTo(t *testing.T, mp *mailpit.Server, address string, n int) *mailpit.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	m, err := mp.WaitFor(ctx, address, n)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// noMailTo fails if address got more than n messages within a moment.
func noMailTo(t *testing.T, mp *mailpit.Server, address string, n int) {
	t.Helper()
	time.Sleep(700 * time.Millisecond)
	got, err := mp.To(t.Context(), address)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) > n {
		t.Fatalf("%s got %d message(s), want %d: %q", address, len(got), n, got[len(got)-1].Subject)
	}
}

var mailLinkRE = regexp.MustCompile(`https?://[^\s"<>]+`)

// linkIn is the first link of the text part under path.
func linkIn(t *testing.T, m *mailpit.Message, path string) string {
	t.Helper()
	for _, l := range mailLinkRE.FindAllString(m.Text, -1) {
		if u, err := url.Parse(l); err == nil && u.Path == path {
			return l
		}
	}
	t.Fatalf("no %s link in the message %q:\n%s", path, m.Subject, m.Text)
	return ""
}

// onOrigin is link with its origin replaced (the same link opened at
// another site).
func onOrigin(link, origin string) string {
	u := mustURL(link)
	o := mustURL(origin)
	u.Scheme, u.Host = o.Scheme, o.Host
	return u.String()
}

// browserAt is a fresh cookie-keeping browser at origin.
func browserAt(t *testing.T, ts *testServer, origin string) *webPerson {
	return &webPerson{t: t, ts: ts, origin: origin, b: oauthtest.NewBrowser(ts.addr)}
}

// submitForm fetches the form formID on u (an absolute URL), sets values
// and posts it, returning the answer.
func (p *webPerson) submitForm(u, formID string, set url.Values) *oauthtest.Page {
	p.t.Helper()
	page := p.getURL(u)
	if page.Status != http.StatusOK {
		p.t.Fatalf("GET %s: %d\n%s", u, page.Status, webExcerpt(page.Body))
	}
	f, err := oauthtest.ParseForm(page.Body, formID)
	if err != nil {
		p.t.Fatalf("%s: %v\n%s", u, err, webExcerpt(page.Body))
	}
	for k, vs := range set {
		f.Values[k] = vs
	}
	action, _ := page.URL.Parse(f.Action)
	res, err := p.b.PostForm(action.String(), f.Values)
	if err != nil {
		p.t.Fatal(err)
	}
	return res
}

// pageText is the text of a page's main element, roughly.
func pageText(body string) string {
	if i := strings.Index(body, "<main"); i >= 0 {
		body = body[i:]
	}
	return regexp.MustCompile(`<[^>]+>`).ReplaceAllString(body, " ")
}

func strconvFormat(f float64) string { return strconv.FormatInt(int64(f), 10) }

func oauthtestOptions(email, password string) oauthtest.Options {
	return oauthtest.Options{Email: email, Password: password}
}

// siteID is the ID of the demo site at origin.
func siteID(t *testing.T, ts *testServer, origin string) tenant.ID {
	t.Helper()
	slug := "demo-academy"
	if origin == ts.open() {
		slug = "open-school"
	}
	s, err := ts.app.Store.SiteBySlug(t.Context(), slug)
	if err != nil {
		t.Fatal(err)
	}
	return s.ID
}
