package session

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/lectern/lectern/storage/cache"
	"github.com/lectern/lectern/tenant"
)

var (
	siteA = &tenant.Site{ID: 1, Slug: "a", Origin: "https://a.example"}
	siteB = &tenant.Site{ID: 2, Slug: "b", Origin: "http://localhost:9090"}
)

// withCookies is a request carrying the cookies rec set.
func withCookies(rec *httptest.ResponseRecorder, form url.Values) *http.Request {
	var r *http.Request
	if form != nil {
		r = httptest.NewRequest(http.MethodPost, "/consent", strings.NewReader(form.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	} else {
		r = httptest.NewRequest(http.MethodGet, "/admin", nil)
	}
	for _, c := range rec.Result().Cookies() {
		r.AddCookie(c)
	}
	return r
}

func TestSessionIsPerSiteAndUser(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ss := NewStore(cache.NewMemory(nil), func() time.Time { return now })
	rec := httptest.NewRecorder()
	created, err := ss.Create(rec, httptest.NewRequest(http.MethodPost, "/login", nil), siteA, "usr_ada")
	if err != nil {
		t.Fatal(err)
	}
	cookies := rec.Result().Cookies()
	if len(cookies) != 1 || cookies[0].Name != "__Host-lectern_session_1" || !cookies[0].HttpOnly || !cookies[0].Secure {
		t.Fatalf("an https site's session cookie: %+v", cookies)
	}
	got, err := ss.Get(withCookies(rec, nil), siteA)
	if err != nil || got == nil || got.UserID != "usr_ada" || got.CSRF != created.CSRF {
		t.Fatalf("the session at its site: %+v, %v", got, err)
	}
	if got, err := ss.Get(withCookies(rec, nil), siteB); err != nil || got != nil {
		t.Fatalf("site A's session seen at site B: %+v, %v", got, err)
	}

	// The cookie names its user; a cookie that claims another user with a
	// valid random part is no session.
	forged := httptest.NewRequest(http.MethodGet, "/admin", nil)
	id, _, _ := strings.Cut(cookies[0].Value, ".")
	forged.AddCookie(&http.Cookie{Name: cookies[0].Name, Value: id + ".usr_eve"})
	if got, err := ss.Get(forged, siteA); err != nil || got != nil {
		t.Fatalf("a cookie claiming another user: %+v, %v", got, err)
	}

	now = now.Add(Absolute + time.Minute)
	if got, err := ss.Get(withCookies(rec, nil), siteA); err != nil || got != nil {
		t.Fatalf("a session past its absolute lifetime: %+v, %v", got, err)
	}
}

func TestDestroyEndsTheSession(t *testing.T) {
	ss := NewStore(cache.NewMemory(nil), nil)
	rec := httptest.NewRecorder()
	if _, err := ss.Create(rec, httptest.NewRequest(http.MethodPost, "/login", nil), siteB, "usr_ada"); err != nil {
		t.Fatal(err)
	}
	if c := rec.Result().Cookies()[0]; c.Name != "lectern_session_2" || c.Secure {
		t.Fatalf("an http site's session cookie: %+v", c)
	}
	out := httptest.NewRecorder()
	if err := ss.Destroy(out, withCookies(rec, nil), siteB); err != nil {
		t.Fatal(err)
	}
	if c := out.Result().Cookies(); len(c) != 1 || c[0].MaxAge >= 0 {
		t.Fatalf("sign-out does not clear the cookie: %+v", c)
	}
	// A copy of the old cookie is worth nothing after sign-out.
	if got, err := ss.Get(withCookies(rec, nil), siteB); err != nil || got != nil {
		t.Fatalf("a destroyed session: %+v, %v", got, err)
	}
}

func TestCSRF(t *testing.T) {
	// Before sign-in: a double-submit cookie.
	rec := httptest.NewRecorder()
	tok := CSRFToken(rec, httptest.NewRequest(http.MethodGet, "/login", nil), siteA, nil)
	if len(tok) != 43 {
		t.Fatalf("token %q", tok)
	}
	if again := CSRFToken(httptest.NewRecorder(), withCookies(rec, nil), siteA, nil); again != tok {
		t.Fatalf("the sign-in form's token changes while its cookie lives: %q, %q", tok, again)
	}
	for name, c := range map[string]struct {
		form url.Values
		sess *Session
		want bool
	}{
		"matching cookie":        {url.Values{"csrf_token": {tok}}, nil, true},
		"missing field":          {url.Values{}, nil, false},
		"another token":          {url.Values{"csrf_token": {strings.Repeat("x", 43)}}, nil, false},
		"the session's token":    {url.Values{"csrf_token": {"session-token"}}, &Session{CSRF: "session-token"}, true},
		"cookie, not session's":  {url.Values{"csrf_token": {tok}}, &Session{CSRF: "session-token"}, false},
		"empty session token":    {url.Values{"csrf_token": {""}}, &Session{}, false},
		"a session without CSRF": {url.Values{"csrf_token": {"x"}}, &Session{}, false},
	} {
		if got := CheckCSRF(withCookies(rec, c.form), siteA, c.sess); got != c.want {
			t.Errorf("%s: CheckCSRF = %v, want %v", name, got, c.want)
		}
	}
	// Site A's cookie does not vouch for a form at site B.
	if CheckCSRF(withCookies(rec, url.Values{"csrf_token": {tok}}), siteB, nil) {
		t.Error("site A's CSRF cookie accepted at site B")
	}
}

// A form a browser marks as cross-origin is refused with a valid token; a
// form of the site itself (or an alias, or through a proxy that rewrote
// Host) and a request without the browser headers are judged by the token.
func TestCSRFRefusesCrossOriginForms(t *testing.T) {
	site := &tenant.Site{ID: 1, Slug: "a", Origin: "https://a.example", Aliases: []string{"www.a.example"}}
	sess := &Session{CSRF: "session-token"}
	for _, c := range []struct {
		name string
		host string
		hdr  []string
		want bool
	}{
		{name: "no Origin, no Sec-Fetch-Site (not a browser)", want: true},
		{name: "same origin", hdr: []string{"Origin", "https://a.example", "Sec-Fetch-Site", "same-origin"}, want: true},
		{name: "old browser, same origin", hdr: []string{"Origin", "https://a.example"}, want: true},
		{name: "alias", hdr: []string{"Origin", "https://www.a.example", "Sec-Fetch-Site", "same-site"}, want: true},
		{name: "behind a proxy that rewrote Host", host: "lectern:8080", hdr: []string{"Origin", "https://a.example", "Sec-Fetch-Site", "same-origin"}, want: true},
		{name: "typed by the person", hdr: []string{"Sec-Fetch-Site", "none"}, want: true},
		{name: "foreign Origin", hdr: []string{"Origin", "https://evil.example"}, want: false},
		{name: "foreign Origin and Sec-Fetch-Site", hdr: []string{"Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site"}, want: false},
		{name: "cross-site without Origin", hdr: []string{"Sec-Fetch-Site", "cross-site"}, want: false},
		{name: "a sibling site of the fleet", hdr: []string{"Origin", "https://b.example", "Sec-Fetch-Site", "same-site"}, want: false},
		{name: "null Origin", hdr: []string{"Origin", "null"}, want: false},
		{name: "the alias under another scheme", hdr: []string{"Origin", "http://www.a.example", "Sec-Fetch-Site", "same-site"}, want: false},
	} {
		r := httptest.NewRequest(http.MethodPost, "/consent", strings.NewReader("csrf_token=session-token"))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.Host = "a.example"
		if c.host != "" {
			r.Host = c.host
		}
		for i := 0; i+1 < len(c.hdr); i += 2 {
			r.Header.Set(c.hdr[i], c.hdr[i+1])
		}
		if got := CheckCSRF(r, site, sess); got != c.want {
			t.Errorf("%s: CheckCSRF = %v, want %v", c.name, got, c.want)
		}
	}
}

// A password reset ends the person's sessions at every site, and no one
// else's.
func TestEndAllEndsEverySiteSession(t *testing.T) {
	ss := NewStore(cache.NewMemory(nil), nil)
	login := func(site *tenant.Site, user string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		if _, err := ss.Create(rec, httptest.NewRequest(http.MethodPost, "/login", nil), site, user); err != nil {
			t.Fatal(err)
		}
		return rec
	}
	adaA, adaB, adaA2, bob := login(siteA, "usr_ada"), login(siteB, "usr_ada"), login(siteA, "usr_ada"), login(siteA, "usr_bob")
	if err := ss.EndAll(t.Context(), "usr_ada"); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		rec  *httptest.ResponseRecorder
		site *tenant.Site
	}{"ada at A": {adaA, siteA}, "ada at B": {adaB, siteB}, "ada's second browser at A": {adaA2, siteA}} {
		if got, err := ss.Get(withCookies(c.rec, nil), c.site); err != nil || got != nil {
			t.Errorf("%s survived EndAll: %+v, %v", name, got, err)
		}
	}
	if got, err := ss.Get(withCookies(bob, nil), siteA); err != nil || got == nil {
		t.Fatalf("another person's session ended too: %v", err)
	}
	// A session started after EndAll works.
	again := login(siteA, "usr_ada")
	if got, _ := ss.Get(withCookies(again, nil), siteA); got == nil {
		t.Fatal("a new session after EndAll does not work")
	}
}
