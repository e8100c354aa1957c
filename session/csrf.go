package session

import (
	"crypto/subtle"
	"net/http"

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

// CheckCSRF verifies the csrf_token field of a submitted form.
func CheckCSRF(r *http.Request, site *tenant.Site, sess *Session) bool {
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
