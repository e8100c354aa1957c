package authserver

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/lectern/lectern/authserver/password"
	"github.com/lectern/lectern/authserver/throttle"
	"github.com/lectern/lectern/i18n"
	"github.com/lectern/lectern/mfa"
	"github.com/lectern/lectern/session"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
	"github.com/lectern/lectern/ui"
)

// loginData is what the sign-in page shows.
type loginData struct {
	Request    string
	ReturnTo   string
	ClientName string
	Email      string
	Error      string
	// SignUp links the sign-up page (a site setting).
	SignUp bool
	// Passkeys offers "Sign in with a passkey" (a site on a domain).
	Passkeys bool
	// StepUp: the school asks staff to confirm with a second factor.
	StepUp bool
}

// Login serves the sign-in page (GET) and checks credentials (POST). After
// sign-in it continues the pending authorization request, or goes to a
// local return_to path.
func (s *Server) Login(w http.ResponseWriter, r *http.Request) {
	site := siteOf(r.Context())
	switch r.Method {
	case http.MethodGet:
		d := loginData{Request: r.URL.Query().Get("auth_request"), ReturnTo: localPath(r.URL.Query().Get("return_to")), StepUp: isStepUp(r)}
		if d.Request != "" {
			ar, err := s.pending(r.Context(), site.ID, d.Request)
			if err != nil {
				s.unavailablePage(w, r, site, err)
				return
			}
			if ar == nil {
				s.expiredPage(w, r, site)
				return
			}
			if c, err := s.client(r.Context(), site, ar.ClientID); err == nil {
				d.ClientName = c.Name
			}
		}
		s.renderLogin(w, r, site, http.StatusOK, d)
	case http.MethodPost:
		s.loginPost(w, r, site)
	default:
		w.Header().Set("Allow", "GET, POST")
		s.errorPage(w, r, site, http.StatusMethodNotAllowed, codeInvalidRequest, "This page takes GET and POST requests.", "")
	}
}

func (s *Server) renderLogin(w http.ResponseWriter, r *http.Request, site *tenant.Site, status int, d loginData) {
	d.SignUp = site.SignUp // the accounts package serves /signup and /password/forgot
	d.Passkeys = mfa.Available(site)
	s.ui.Render(w, r, status, "login", ui.Page{Title: "login.title", SiteName: site.Name, CSRF: session.CSRFToken(w, r, site, nil), Data: d})
}

func (s *Server) loginPost(w http.ResponseWriter, r *http.Request, site *tenant.Site) {
	ctx := r.Context()
	if !s.parsePageForm(w, r, site) {
		return
	}
	request := r.PostFormValue("auth_request")
	// Bytes that are not UTF-8 are dropped (no account's address has
	// them, so nothing is lost).
	email := strings.ToValidUTF8(strings.TrimSpace(r.PostFormValue("email")), "")
	d := loginData{ReturnTo: localPath(r.PostFormValue("return_to"))}
	// Echoed into the form again only within bounds, whichever answer
	// comes (a form that expired too): a request's ID has 43 characters
	// (pending refuses any other), an address at most maxEmail bytes.
	// What is longer is refused below, and not sent back (audit L, 7d).
	if len(request) == 43 {
		d.Request = request
	}
	if len(email) <= maxEmail {
		d.Email = email
	}
	if !session.CheckCSRF(r, site, nil) {
		d.Error = "Your sign-in form expired. Please try again."
		s.renderLogin(w, r, site, http.StatusForbidden, d)
		return
	}
	var ar *authRequest
	if request != "" {
		var err error
		if ar, err = s.pending(ctx, site.ID, request); err != nil {
			s.unavailablePage(w, r, site, err)
			return
		}
		if ar == nil {
			s.expiredPage(w, r, site)
			return
		}
	}
	pw := r.PostFormValue("password")
	if email == "" || pw == "" {
		d.Error = "Enter your e-mail address and password."
		s.renderLogin(w, r, site, http.StatusBadRequest, d)
		return
	}
	if len(email) > maxEmail {
		d.Error = "The e-mail address or password is wrong."
		s.renderLogin(w, r, site, http.StatusUnauthorized, d)
		return
	}
	// Throttled per account and IP, per IP and per account, platform-wide
	// (authserver/throttle): decided before any password is checked.
	a := s.throttle.Attempt(ctx, site, d.Email, tenant.ClientIP(r))
	refusal, err := s.throttle.Admit(ctx, a)
	if err != nil {
		s.unavailablePage(w, r, site, err)
		return
	}
	if refusal != nil {
		s.refuseLogin(w, r, site, d, a, refusal)
		return
	}
	u, err := s.store.UserByEmail(ctx, d.Email)
	hash := dummyHash() // an unknown address costs a real check: timing tells nothing
	switch {
	case errors.Is(err, storage.ErrNotFound):
	case err != nil:
		s.unavailablePage(w, r, site, err)
		return
	default:
		hash = u.PasswordHash
	}
	refusal, err = s.throttle.Check(ctx, a, pw, hash)
	switch {
	case refusal != nil:
		s.refuseLogin(w, r, site, d, a, refusal)
		return
	case err != nil && !errors.Is(err, password.ErrMismatch) && !errors.Is(err, password.ErrMalformed):
		s.unavailablePage(w, r, site, err)
		return
	case err != nil || u == nil:
		s.throttle.Failed(ctx, a)
		s.audit(ctx, site.ID, d.Email, "login.failed", d.Email, r, nil)
		d.Error = "The e-mail address or password is wrong."
		s.renderLogin(w, r, site, http.StatusUnauthorized, d)
		return
	}
	s.throttle.Succeeded(ctx, a)
	totpOn, passkeys, err := mfa.HasFactor(ctx, s.store, site.ID, u.ID)
	if err != nil {
		s.unavailablePage(w, r, site, err)
		return
	}
	if totpOn || (passkeys > 0 && mfa.Available(site)) {
		s.askFactor(w, r, site, u, d, totpOn, passkeys)
		return
	}
	s.signedIn(w, r, site, u.ID, u.Email, d.Request, d.ReturnTo, []string{session.AMRPassword})
}

// refuseLogin shows the sign-in form again with why the attempt was not
// checked. A throttled pair is audited once per window, not per attempt:
// refused attempts are cheap to send, and each must not cost a database
// write; a busy gate is capacity, not an event about the account.
func (s *Server) refuseLogin(w http.ResponseWriter, r *http.Request, site *tenant.Site, d loginData, a *throttle.Attempt, f *throttle.Refusal) {
	ctx := r.Context()
	w.Header().Set("Retry-After", f.RetryAfter())
	d.Error = f.Message(i18n.Resolve(r, site.Locale))
	if f.Reason != "busy" && s.throttle.FirstRefusal(ctx, a, f.Reason) {
		s.audit(ctx, site.ID, d.Email, "login.throttled", d.Email, r, map[string]any{"reason": f.Reason})
	}
	s.renderLogin(w, r, site, f.Status, d)
}

// maxEmail bounds the address a sign-in may name (RFC 5321's path limit).
const maxEmail = 320

// dummyHash is verified when an e-mail address has no account. It is made
// on first use: hashing costs 64 MiB and ~0.1 s, which every process (each
// CLI command, each replica's idle heap) paid at start-up when it was made
// at init.
var dummyHash = sync.OnceValue(func() string {
	h, _ := password.Hash("lectern-timing-equaliser", password.Default)
	return h
})

func (s *Server) expiredPage(w http.ResponseWriter, r *http.Request, site *tenant.Site) {
	s.errorPage(w, r, site, http.StatusBadRequest, codeInvalidRequest,
		"This sign-in request has expired.", "Go back to the application and start again.")
}

// localPath accepts only a path on this origin as a return target: never
// another origin (open redirect). Browsers parse a Location leniently
// (WHATWG URL): they drop tabs and newlines anywhere, read a backslash as a
// slash, and take "//host" as another origin, so "/\t/evil.test" and
// "/\\evil.test" lead away. A target with any control character, space
// or backslash is refused whole, rather than cleaned, and what remains
// must parse as a bare path that does not start with "//".
func localPath(p string) string {
	if len(p) < 1 || len(p) > maxReturnPath || p[0] != '/' || strings.HasPrefix(p, "//") {
		return ""
	}
	for i := 0; i < len(p); i++ {
		if c := p[i]; c <= ' ' || c == 0x7f || c == '\\' {
			return ""
		}
	}
	u, err := url.Parse(p)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || !strings.HasPrefix(u.Path, "/") || strings.HasPrefix(u.Path, "//") {
		return ""
	}
	return p
}

// maxReturnPath bounds a return target.
const maxReturnPath = 2048

func hashHex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:16])
}

// rememberLanguage carries the language between the account and the
// browser once a sign-in is complete (every factor given): the account's
// choice wins (it follows the person to a new browser); a choice made
// before signing in, on an account without one, is kept on the account.
func (s *Server) rememberLanguage(w http.ResponseWriter, r *http.Request, userID string) {
	u, err := s.store.UserByID(r.Context(), userID)
	if err != nil {
		s.logger.WarnContext(r.Context(), "language of the account not read", "err", err)
		return
	}
	if l := i18n.Normalize(u.Language); l != "" {
		i18n.Remember(w, r, l)
		return
	}
	c, err := r.Cookie(i18n.CookieName)
	if err != nil {
		return
	}
	if l := i18n.Normalize(c.Value); l != "" {
		if err := s.store.SetUserLanguage(r.Context(), u.ID, l); err != nil {
			s.logger.WarnContext(r.Context(), "language not remembered on the account", "err", err)
		}
	}
}
