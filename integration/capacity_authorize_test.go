package integration

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/lectern/lectern/internal/demo"
	"github.com/lectern/lectern/internal/oauthtest"
	"github.com/lectern/lectern/limits"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/vocab"
)

// Anonymous authorization requests (issue 14 part B, item 2): each stores
// a pending request in the cache every site shares, so they are bounded
// in size, rate and number.

// state and nonce longer than 512 bytes are refused with invalid_request
// at the (verified) redirect URI, without echoing them; 512 is accepted.
func TestAuthorizeBoundsStateAndNonce(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, nil)
		long := strings.Repeat("s", 513)
		for _, p := range []string{"state", "nonce"} {
			page := anonymousAuthorize(t, ts, ts.academy(), nextSourceIP(), url.Values{p: {long}})
			loc, err := url.Parse(page.Header.Get("Location"))
			if page.Status != http.StatusFound || err != nil || !strings.HasPrefix(loc.String(), callback) {
				t.Fatalf("%s of 513 bytes: %d to %q; want a redirect to the client", p, page.Status, page.Header.Get("Location"))
			}
			q := loc.Query()
			if q.Get("error") != "invalid_request" || !strings.Contains(q.Get("error_description"), "512") || q.Has("state") && len(q.Get("state")) > 512 {
				t.Fatalf("%s of 513 bytes: %v; want invalid_request naming the bound, without the long value", p, q)
			}
		}
		ok := strings.Repeat("n", 512)
		page := anonymousAuthorize(t, ts, ts.academy(), nextSourceIP(), url.Values{"state": {ok}, "nonce": {ok}})
		if page.Status != http.StatusFound || !strings.HasPrefix(page.Header.Get("Location"), "/login?auth_request=") {
			t.Fatalf("state and nonce of 512 bytes: %d %q; want the sign-in page", page.Status, page.Header.Get("Location"))
		}
	})
}

// pendingValue starts an anonymous authorization and returns what the
// cache holds for it.
func pendingValue(t *testing.T, ts *testServer, q url.Values) []byte {
	t.Helper()
	page := anonymousAuthorize(t, ts, ts.academy(), nextSourceIP(), q)
	loc, err := url.Parse(page.Header.Get("Location"))
	if page.Status != http.StatusFound || err != nil || loc.Path != "/login" {
		t.Fatalf("authorize: %d %q", page.Status, page.Header.Get("Location"))
	}
	site, err := ts.app.Store.SiteBySlug(context.Background(), demo.AcademySlug)
	if err != nil {
		t.Fatal(err)
	}
	v, err := ts.app.Cache.Get(context.Background(), storage.CacheKey(site.ID, "authreq", loc.Query().Get("auth_request")))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// A pending request costs its parameters and a few dozen bytes more: no
// field names, the challenge as 32 bytes, no resource (it is the site's).
// Before: JSON of about 330 bytes for a typical request, 2.5 KB at the
// old bound of state and nonce.
func TestPendingAuthorizationIsCompact(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, nil)
		state, nonce := strings.Repeat("s", 512), strings.Repeat("n", 512)
		scope := "openid account:read"
		v := pendingValue(t, ts, url.Values{"state": {state}, "nonce": {nonce}, "scope": {scope}})
		params := len(state) + len(nonce) + len(scope) + len(demo.MemberClientID) + len(callback)
		if overhead := len(v) - params; overhead > 48 {
			t.Fatalf("a pending request takes %d bytes for %d bytes of parameters: %d of overhead, want at most 48 (the 32-byte challenge and lengths)",
				len(v), params, overhead)
		}
		typical := pendingValue(t, ts, nil)
		t.Logf("pending request: %d bytes typical, %d bytes with state and nonce of 512", len(typical), len(v))
	})
}

// Anonymous authorizations are limited per address, across sites: beyond
// the limit a page says to try again (429, Retry-After), at this site and
// the others; another address is not affected.
func TestAnonymousAuthorizeLimitedPerAddress(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, withLimits(map[limits.Name]int{limits.AuthorizePerIP: 5}))
		ip := nextSourceIP()
		for i := range 5 {
			if p := anonymousAuthorize(t, ts, ts.academy(), ip, nil); p.Status != http.StatusFound {
				t.Fatalf("authorization %d: %d", i+1, p.Status)
			}
		}
		p := anonymousAuthorize(t, ts, ts.academy(), ip, nil)
		if p.Status != http.StatusTooManyRequests || p.Header.Get("Retry-After") == "" || !hasText(p, "Too many sign-ins are being started") {
			t.Fatalf("6th anonymous authorization in a minute: %d Retry-After %q; want 429 and a page\n%s", p.Status, p.Header.Get("Retry-After"), p.Body)
		}
		if p := anonymousAuthorize(t, ts, ts.academy(), nextSourceIP(), nil); p.Status != http.StatusFound {
			t.Fatalf("another address: %d", p.Status)
		}
		if p := anonymousAuthorize(t, ts, ts.open(), ip, nil); p.Status != http.StatusTooManyRequests {
			t.Fatalf("the same address at the other site: %d, want 429: the limit holds across sites", p.Status)
		}
	})
}

// A site holds at most its cap of pending requests: beyond it, from any
// address, a page says too many sign-ins are in progress (429 with a
// Retry-After within the pending lifetime); the other site still works.
func TestPendingAuthorizationsCappedPerSite(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, withLimits(map[limits.Name]int{limits.PendingAuthorizations: 3}))
		// A member signs in and consents: one pending request.
		member := newFlow(t, ts, ts.academy(), demo.MemberClientID, "openid", "account:read")
		member.authorize(demo.StudentEmail, demo.StudentPassword)
		for i := range 2 {
			if p := anonymousAuthorize(t, ts, ts.academy(), nextSourceIP(), nil); p.Status != http.StatusFound {
				t.Fatalf("pending request %d: %d", i+2, p.Status)
			}
		}
		p := anonymousAuthorize(t, ts, ts.academy(), nextSourceIP(), nil)
		retry, _ := strconv.Atoi(p.Header.Get("Retry-After"))
		if p.Status != http.StatusTooManyRequests || retry < 1 || retry > 17*60 || !hasText(p, "Too many sign-ins are in progress") {
			t.Fatalf("4th pending request at a cap of 3: %d Retry-After %q; want 429 within the pending lifetime\n%s", p.Status, p.Header.Get("Retry-After"), p.Body)
		}
		if p := anonymousAuthorize(t, ts, ts.open(), nextSourceIP(), nil); p.Status != http.StatusFound {
			t.Fatalf("the other site: %d", p.Status)
		}
		// The signed-in member's next authorization (consent remembered)
		// stores nothing and goes through.
		member.authorize(demo.StudentEmail, demo.StudentPassword)
	})
}

// A site's own override (the provider's, here) replaces the platform
// default for that site only.
func TestSiteOverrideOfAnAuthorizeLimit(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, nil)
		setProviderLimits(t, ts, demo.AcademySlug, map[string]int{string(limits.PendingAuthorizations): 1})
		eventually(t, 10*time.Second, func() error {
			if p := anonymousAuthorize(t, ts, ts.academy(), nextSourceIP(), nil); p.Status != http.StatusTooManyRequests {
				return errStatus(p.Status)
			}
			return nil
		})
		for range 3 {
			if p := anonymousAuthorize(t, ts, ts.open(), nextSourceIP(), nil); p.Status != http.StatusFound {
				t.Fatalf("the other site keeps the platform default: %d", p.Status)
			}
		}
	})
}

type errStatus int

func (e errStatus) Error() string { return "status " + strconv.Itoa(int(e)) }

// A signed-in person's authorizations are bounded per person (audit of
// issue 14, finding 4): one session asking for consent 40 times stores at
// most 20 requests (then 429 naming the person's own sign-ins), so it
// cannot use up the site's cap of pending requests and lock anonymous
// sign-ins out; a person opening a few applications at once is served.
func TestSignedInAuthorizationsBoundedPerPerson(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, withLimits(map[limits.Name]int{limits.PendingAuthorizations: 30}))
		f := newFlow(t, ts, ts.academy(), demo.MemberClientID, "openid", "account:read")
		// Sign in (one pending request), and leave without consenting.
		out, err := f.browser.Authorize(f.authURL(), oauthtest.Options{Email: demo.StudentEmail, Password: demo.StudentPassword, Decision: "deny"})
		if err != nil {
			t.Fatal(err)
		}
		if out.Redirect == nil || out.Redirect.Query().Get("error") != "access_denied" {
			t.Fatalf("sign-in and denial: %+v", out)
		}
		var stored, refused int
		for i := range 40 {
			p, err := f.browser.Get(f.authURL(oauth2.SetAuthURLParam("prompt", "consent")))
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case p.Status == http.StatusFound && strings.HasPrefix(p.Header.Get("Location"), "/consent?auth_request="):
				if refused > 0 {
					t.Fatalf("request %d stored after a refusal", i+1)
				}
				stored++
			case p.Status == http.StatusTooManyRequests && p.Header.Get("Retry-After") != "" && hasText(p, "You have started too many sign-ins"):
				refused++
			default:
				t.Fatalf("signed-in authorization %d: %d %q\n%s", i+1, p.Status, p.Header.Get("Location"), p.Body)
			}
		}
		if stored != vocab.PendingPerPerson || refused != 40-vocab.PendingPerPerson {
			t.Fatalf("one session asking 40 times: %d stored, %d refused; want %d and %d", stored, refused, vocab.PendingPerPerson, 40-vocab.PendingPerPerson)
		}
		for i := range 5 {
			if p := anonymousAuthorize(t, ts, ts.academy(), nextSourceIP(), nil); p.Status != http.StatusFound {
				t.Fatalf("anonymous sign-in %d after one session's 40 requests: %d, want 302 (the site's cap of 30 is not used up)\n%s", i+1, p.Status, p.Body)
			}
		}
		// Another person at the same site is not affected by the first's bound.
		g := newFlow(t, ts, ts.academy(), demo.MemberClientID, "openid", "account:read")
		g.authorize(demo.OwnerEmail, demo.OwnerPassword)
	})
}
