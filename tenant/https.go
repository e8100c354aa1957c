package tenant

import (
	"net/http"
)

// HSTS is the Strict-Transport-Security header of every answer an https
// site sends over https (RFC 6797): two years, the usual value for sites
// that will stay on https. Not includeSubDomains: a site's origin may be a
// customer's own domain, and the platform does not decide for the hosts it
// does not serve (docs/decisions.md). Never on an answer over plain http:
// an HSTS host must not send it there (§7.2), and a browser would ignore
// it (§8.1).
const HSTS = "max-age=63072000"

// secure answers what an https site needs before its handlers run, and
// reports whether the request may go on. Every answer over https gets HSTS. A request
// that arrived over plain http (directly, or from a trusted proxy saying
// X-Forwarded-Proto: http; the header of anyone else is not believed) is
// not served: GET and HEAD are redirected to the same path at the site's
// origin (308, which keeps the method), every other method is refused, as
// its body, which may carry credentials, already crossed the network in
// the clear and must not be acted on or bounced back to be sent again.
func secure(w http.ResponseWriter, r *http.Request, site *Site, scheme string) bool {
	if !site.Secure() {
		return true
	}
	if scheme == "https" {
		w.Header().Set("Strict-Transport-Security", HSTS)
		return true
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		target := site.Origin + r.URL.EscapedPath()
		if r.URL.EscapedPath() == "" || r.URL.EscapedPath()[0] != '/' {
			target = site.Origin + "/"
		}
		if r.URL.RawQuery != "" {
			target += "?" + r.URL.RawQuery
		}
		w.Header().Set("Location", target)
		WriteError(w, http.StatusPermanentRedirect, "https_required", "this site is served over https only: "+site.Origin)
	default:
		WriteError(w, http.StatusBadRequest, "invalid_request",
			"this site accepts requests over https only: send it to "+site.Origin+" (anything this request carried crossed the network unencrypted)")
	}
	return false
}
