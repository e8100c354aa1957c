package authserver

import (
	"net/http"

	"github.com/lectern/lectern/session"
	"github.com/lectern/lectern/ui"
)

// Logout shows a sign-out button (GET) and signs out (POST, CSRF-checked:
// a cross-site request must not sign anyone out).
func (s *Server) Logout(w http.ResponseWriter, r *http.Request) {
	site := siteOf(r.Context())
	sess, err := s.sessions.Get(r, site)
	if err != nil {
		s.unavailablePage(w, r, site, err)
		return
	}
	data := map[string]string{}
	switch r.Method {
	case http.MethodGet:
		data["ReturnTo"] = localPath(r.URL.Query().Get("return_to"))
		if sess != nil {
			if p, err := s.profile(r.Context(), site.ID, sess.UserID); err == nil {
				data["Email"] = p.Email
			}
		}
	case http.MethodPost:
		if !s.parsePageForm(w, r, site) {
			return
		}
		if !session.CheckCSRF(r, site, sess) {
			s.errorPage(w, r, site, http.StatusForbidden, codeInvalidRequest, "This sign-out form expired or did not come from this site.", "")
			return
		}
		if sess != nil {
			if err := s.sessions.Destroy(w, r, site); err != nil {
				s.unavailablePage(w, r, site, err)
				return
			}
			s.audit(r.Context(), site.ID, sess.UserID, "logout", sess.UserID, r, nil)
		}
		if to := localPath(r.PostFormValue("return_to")); to != "" {
			http.Redirect(w, r, to, http.StatusSeeOther)
			return
		}
		sess = nil
	default:
		w.Header().Set("Allow", "GET, POST")
		s.errorPage(w, r, site, http.StatusMethodNotAllowed, codeInvalidRequest, "This page takes GET and POST requests.", "")
		return
	}
	s.ui.Render(w, r, http.StatusOK, "logout", ui.Page{Title: "logout.title", SiteName: site.Name, CSRF: session.CSRFToken(w, r, site, sess), Data: data})
}
