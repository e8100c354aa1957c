package session

import (
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/lectern/lectern/tenant"
)

// CSRFToken returns the anti-forgery token for forms of r's browser at
// site, setting its cookie if the browser has none yet. Signed-in pages use
// the session's token; the sign-in page, shown before a session exists, uses
// a double-submit cookie, which also stops login CSRF.
func CSRFToken(w http.ResponseWriter, r *http.Request, site *tenant.Site, sess *Session) string {
	if sess != nil {
		return sess.CSRF
	}
	name := cookieName(site, "lectern_csrf")
	if c, err := r.Cookie(name); err == nil && len(c.Value) == 43 {
		return c.Value
	}
	tok := randomToken()
	http.SetCookie(w, &http.Cookie{Name: name, Value: tok, Path: "/", HttpOnly: true, Secure: site.Secure(), SameSite: http.SameSiteLaxMode})
	return tok
}

// CheckCSRF verifies that a submitted form comes from a page of site: a
// browser that says the request is cross-origin (Sec-Fetch-Site, or an
// Origin that is not the site's) is refused whatever it carries, and the
// csrf_token field must match. Every cookie-authenticated state change
// (sign-in, consent, sign-out, the admin area, account pages) calls it
// before it changes anything, so both defences hold on each of them.
func CheckCSRF(r *http.Request, site *tenant.Site, sess *Session) bool {
	if !SameOrigin(r, site) {
		return false
	}
	got := r.PostFormValue("csrf_token")
	if got == "" {
		return false
	}
	want := ""
	if sess != nil {
		want = sess.CSRF
	} else if c, err := r.Cookie(cookieName(site, "lectern_csrf")); err == nil {
		want = c.Value
	}
	return want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// SameOrigin reports whether r may be a form of site's own pages, by
// net/http's CrossOriginProtection (Sec-Fetch-Site, else Origin against
// Host; safe methods and requests with neither header, which browsers
// always send on a cross-origin POST, pass). The site's origin and its
// aliases are trusted as origins: behind a proxy that sets
// X-Forwarded-Host, the Host that protection compares with is the proxy's.
// A sibling site on the same fleet is as foreign as any other origin.
// CheckCSRF calls it; a form that refuses a foreign request before it
// reads the body calls it too, so that every form trusts the same origins.
func SameOrigin(r *http.Request, site *tenant.Site) bool {
	p := http.NewCrossOriginProtection()
	_ = p.AddTrustedOrigin(site.Origin)
	scheme, _, _ := strings.Cut(site.Origin, "://")
	for _, alias := range site.Aliases {
		_ = p.AddTrustedOrigin(scheme + "://" + alias)
	}
	return p.Check(r) == nil
}
