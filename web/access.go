package web

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/lectern/lectern/session"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// access says who may open a page.
type access int

const (
	// signedIn: anyone signed in at the site (the account pages).
	signedIn access = iota
	// operator: owners, admins and lecturers (the admin dashboard).
	operator
	// manager: owners and admins (settings, audit log).
	manager
	// developers: owners and admins, and only while the "MCP connections"
	// beta is on; otherwise the pages do not exist (404).
	developers
)

// request is a signed-in person's request at a site.
type request struct {
	site *tenant.Site
	// stored is the site as stored, read fresh for admin pages: the beta
	// flag must show a change at once, not when the resolver's cached copy
	// expires.
	stored *storage.Site
	sess   *session.Session
	user   *storage.User
	roles  []string
}

func (rq *request) isOperator() bool { return slices.ContainsFunc(rq.roles, storage.IsOperatorRole) }

func (rq *request) isManager() bool {
	return slices.Contains(rq.roles, storage.RoleOwner) || slices.Contains(rq.roles, storage.RoleAdmin)
}

func (rq *request) developersOn() bool { return rq.stored != nil && rq.stored.MCPConnectionsBeta }

type pageFunc func(w http.ResponseWriter, r *http.Request, rq *request)

// maxFormBytes bounds a submitted form: the largest is an application's ten
// redirect URIs.
const maxFormBytes = 64 << 10

// handle registers a page behind the checks its access level needs, in
// this order: a session (else sign in), a role (403), the beta (404), the
// manager role (403), and for a POST the CSRF token (403) before anything
// changes.
func (h *Handler) handle(pattern string, level access, page pageFunc) {
	h.handleForm(pattern, level, maxFormBytes, false, page)
}

// handleUpload registers a page that takes a multipart form (a file) of at
// most maxBytes, with the same checks; the file is parsed before the CSRF
// token, which travels in the same body, can be read.
func (h *Handler) handleUpload(pattern string, level access, maxBytes int64, page pageFunc) {
	h.handleForm(pattern, level, maxBytes, true, page)
}

func (h *Handler) handleForm(pattern string, level access, maxBytes int64, multipart bool, page pageFunc) {
	h.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		site, _ := tenant.FromContext(r.Context())
		ctx := r.Context()
		sess, err := h.sessions.Get(r, site)
		if err != nil {
			h.unavailable(w, r, &request{site: site}, err)
			return
		}
		if sess == nil {
			h.signIn(w, r)
			return
		}
		rq := &request{site: site, sess: sess}
		if rq.user, err = h.store.UserByID(ctx, sess.UserID); errors.Is(err, storage.ErrNotFound) {
			// The account is gone; the session means nothing any more.
			h.signIn(w, r)
			return
		} else if err != nil {
			h.fail(w, r, rq, err)
			return
		}
		if rq.roles, err = h.store.RolesAt(ctx, site.ID, sess.UserID); err != nil {
			h.fail(w, r, rq, err)
			return
		}
		if level >= operator {
			if !rq.isOperator() {
				h.forbidden(w, r, rq, h.t(r, rq, "web.access.no_admin", "Site", site.Name),
					"The admin area is for the school's owners, admins and lecturers. Your connected apps are under My connections.")
				return
			}
			if rq.stored, err = h.store.SiteByID(ctx, site.ID); err != nil {
				h.fail(w, r, rq, err)
				return
			}
		}
		if h.staffFactor(w, r, rq) {
			return
		}
		if level == developers && !rq.developersOn() {
			h.notFound(w, r, rq)
			return
		}
		if level >= manager && !rq.isManager() {
			h.forbidden(w, r, rq, "Only owners and admins can open this page.",
				h.t(r, rq, "web.access.signed_in_role", "Email", rq.user.Email, "Role", h.t(r, rq, "role."+roleLabel(rq.roles)), "Site", site.Name))
			return
		}
		if r.Method == http.MethodPost {
			// Sec-Fetch-Site, or else Origin, must name the site or one
			// of its aliases, as for every form of the site: this stops a
			// cross-site post that carries a leaked token before its body
			// (an upload's megabytes) is read. The CSRF token follows.
			if !session.SameOrigin(r, site) {
				h.problem(w, r, rq, http.StatusForbidden, "This form has expired",
					"The form was not accepted: it did not come from this site. Nothing was changed.",
					"Go back, reload the page and try again.")
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, maxBytes)
			var err error
			if multipart {
				// In memory: the body is capped at maxBytes already.
				err = r.ParseMultipartForm(maxBytes)
			} else {
				err = r.ParseForm()
			}
			if err != nil {
				var tooLarge *http.MaxBytesError
				if errors.As(err, &tooLarge) {
					// Only an upload form has a file to make smaller.
					next := "Go back, shorten what you entered and try again."
					if multipart {
						next = "Go back and try a smaller file."
					}
					h.problem(w, r, rq, http.StatusRequestEntityTooLarge, "Too large",
						h.t(r, rq, "web.access.too_large", "Size", byteSize(maxBytes)), next)
					return
				}
				h.problem(w, r, rq, http.StatusBadRequest, "Form not accepted",
					"The form could not be read (it may be too large). Nothing was changed.", "Go back and try again.")
				return
			}
			if !session.CheckCSRF(r, site, sess) {
				h.problem(w, r, rq, http.StatusForbidden, "This form has expired",
					"The form was not accepted: it expired or did not come from this site. Nothing was changed.",
					"Go back, reload the page and try again.")
				return
			}
		}
		page(w, r, rq)
	})
}

// byteSize writes a size for people: "2.1 MiB", "64 KiB".
func byteSize(n int64) string {
	if n >= 1<<20 {
		return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
	}
	return strconv.FormatInt(n>>10, 10) + " KiB"
}

// signIn sends a person without a session to the sign-in page, which comes
// back here afterwards. A form cannot be replayed after signing in, so a
// POST comes back to the area's start page.
func (h *Handler) signIn(w http.ResponseWriter, r *http.Request) {
	back := r.URL.RequestURI()
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		back = "/account/connections"
		if r.URL.Path == "/admin" || strings.HasPrefix(r.URL.Path, "/admin/") {
			back = "/admin"
		}
	}
	seeOther(w, r, "/login?return_to="+url.QueryEscape(back))
}

// roleLabel names the strongest of the roles, for people.
func roleLabel(roles []string) string {
	for _, r := range []string{storage.RoleOwner, storage.RoleAdmin, storage.RoleLecturer, storage.RoleStudent} {
		if slices.Contains(roles, r) {
			return r
		}
	}
	return "none"
}
