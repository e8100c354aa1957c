package web

import (
	"net/http"

	"github.com/lectern/lectern/i18n"
	"github.com/lectern/lectern/tenant"
	"github.com/lectern/lectern/ui"
)

// chooseLanguage serves GET /language?lang=de&return_to=/login?...: the
// language selector of every page. The choice goes into a cookie of the
// site and, for a signed-in person, onto the account (so sign-in elsewhere
// brings it back); then the person returns to the page, which is always a
// path of this site.
//
// It is a link, so that it works on every page, with or without a form
// token. A link another site shows could change someone's language; the
// account is therefore changed only when the browser says the click came
// from this site (Sec-Fetch-Site same-origin, or none for a typed address;
// browsers without the header are old enough to be let through, as
// net/http's CrossOriginProtection does).
func (h *Handler) chooseLanguage(w http.ResponseWriter, r *http.Request) {
	site, _ := tenant.FromContext(r.Context())
	q := r.URL.Query()
	lang := i18n.Normalize(q.Get("lang"))
	if lang == "" || !i18n.Supported(q.Get("lang")) {
		h.problem(w, r, &request{site: site}, http.StatusBadRequest, "language.unknown_title", "language.unknown", "")
		return
	}
	back := q.Get("return_to")
	if !ui.LocalPath(back) {
		back = "/account"
	}
	i18n.Remember(w, r, lang)
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
		sess, err := h.sessions.Get(r, site)
		if err == nil && sess != nil {
			if err := h.store.SetUserLanguage(r.Context(), sess.UserID, lang); err != nil {
				h.logger.WarnContext(r.Context(), "language not remembered on the account", "err", err)
			}
		}
	}
	seeOther(w, r, back)
}
