package authserver

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lectern/lectern/authserver/throttle"
	"github.com/lectern/lectern/i18n"
	"github.com/lectern/lectern/mfa"
	"github.com/lectern/lectern/session"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
	"github.com/lectern/lectern/ui"
)

// Second factors at sign-in (issue 16): after the password, a person who
// has an authenticator app or a passkey at the site proves it on the
// "second factor" step. The step's state is kept in the cache for
// factorLifetime under a random ID, bound to the browser by the sign-in
// form's anti-forgery cookie; a passkey alone (with user verification)
// signs in without a password.

// factorLifetime bounds the second-factor step after the password.
const factorLifetime = 10 * time.Minute

// factorStep is a sign-in waiting for its second factor.
type factorStep struct {
	UserID   string `json:"user"`
	Email    string `json:"email"`
	Request  string `json:"request,omitempty"`
	ReturnTo string `json:"return_to,omitempty"`
	// Browser is the SHA-256 of the browser's sign-in CSRF token.
	Browser []byte `json:"browser"`
}

func factorKey(site tenant.ID, id string) string { return storage.CacheKey(site, "factor", id) }

// factorData is what the second-factor page shows.
type factorData struct {
	Step     string
	TOTP     bool
	Passkeys bool
	Error    string
}

func browserHash(token string) []byte {
	sum := sha256.Sum256([]byte("factor:" + token))
	return sum[:]
}

// askFactor starts the second-factor step for u, who gave the right
// password, and shows its page.
func (s *Server) askFactor(w http.ResponseWriter, r *http.Request, site *tenant.Site, u *storage.User, d loginData, totp bool, passkeys int) {
	ctx := r.Context()
	csrf := session.CSRFToken(w, r, site, nil)
	st := factorStep{UserID: u.ID, Email: u.Email, Request: d.Request, ReturnTo: d.ReturnTo, Browser: browserHash(csrf)}
	raw, err := json.Marshal(st)
	if err != nil {
		s.unavailablePage(w, r, site, err)
		return
	}
	id := randomToken()
	if err := s.cache.Set(ctx, factorKey(site.ID, id), raw, factorLifetime); err != nil {
		s.unavailablePage(w, r, site, err)
		return
	}
	s.renderFactor(w, r, site, http.StatusOK, factorData{Step: id, TOTP: totp, Passkeys: passkeys > 0 && mfa.Available(site)})
}

func (s *Server) renderFactor(w http.ResponseWriter, r *http.Request, site *tenant.Site, status int, d factorData) {
	w.Header().Set("Cache-Control", "no-store")
	s.ui.Render(w, r, status, "factor", ui.Page{Title: "Confirm it's you", SiteName: site.Name, CSRF: session.CSRFToken(w, r, site, nil), Data: d})
}

// loadStep reads the second-factor step id of r's browser, or nil (none,
// expired, or another browser's).
func (s *Server) loadStep(ctx context.Context, r *http.Request, site *tenant.Site, id string) (*factorStep, error) {
	if len(id) != 43 {
		return nil, nil
	}
	raw, err := s.cache.Get(ctx, factorKey(site.ID, id))
	if errors.Is(err, storage.ErrCacheMiss) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var st factorStep
	if json.Unmarshal(raw, &st) != nil {
		return nil, nil
	}
	if subtle.ConstantTimeCompare(st.Browser, browserHash(r.PostFormValue("csrf_token"))) != 1 {
		return nil, nil // another browser's step
	}
	return &st, nil
}

// Factor serves POST /login/factor: a TOTP code or a recovery code for the
// second-factor step.
func (s *Server) Factor(w http.ResponseWriter, r *http.Request) {
	site := siteOf(r.Context())
	ctx := r.Context()
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		s.errorPage(w, r, site, http.StatusMethodNotAllowed, codeInvalidRequest, "This page takes POST requests.", "")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	if !s.parsePageForm(w, r, site) {
		return
	}
	if !session.CheckCSRF(r, site, nil) {
		s.errorPage(w, r, site, http.StatusForbidden, codeInvalidRequest, "Your sign-in form expired.", "Go back to the sign-in page and try again.")
		return
	}
	id := r.PostFormValue("step")
	st, err := s.loadStep(ctx, r, site, id)
	if err != nil {
		s.unavailablePage(w, r, site, err)
		return
	}
	if st == nil {
		s.errorPage(w, r, site, http.StatusBadRequest, codeInvalidRequest, "This sign-in has expired.", "Go back to the sign-in page and sign in again.")
		return
	}
	totpOn, keys, err := mfa.HasFactor(ctx, s.store, site.ID, st.UserID)
	if err != nil {
		s.unavailablePage(w, r, site, err)
		return
	}
	d := factorData{Step: id, TOTP: totpOn, Passkeys: keys > 0 && mfa.Available(site)}
	checker := &mfa.Checker{Store: s.store, Cache: s.cache, Now: s.now}
	ok, err := checker.Check(ctx, st.UserID, r.PostFormValue("code"))
	switch {
	case errors.Is(err, mfa.ErrThrottled):
		w.Header().Set("Retry-After", "900")
		d.Error = "Too many wrong codes. Wait 15 minutes and try again."
		s.renderFactor(w, r, site, http.StatusTooManyRequests, d)
		return
	case err != nil:
		s.unavailablePage(w, r, site, err)
		return
	case !ok:
		s.audit(ctx, site.ID, st.UserID, "login.factor_failed", st.Email, r, nil)
		d.Error = "That code is not right. Enter the current code from your authenticator app, or one of your recovery codes."
		s.renderFactor(w, r, site, http.StatusUnauthorized, d)
		return
	}
	_ = s.cache.Delete(ctx, factorKey(site.ID, id))
	s.signedIn(w, r, site, st.UserID, st.Email, st.Request, st.ReturnTo, []string{session.AMRPassword, session.AMROTP, session.AMRMulti})
}

// signedIn starts the session of a person who proved who they are by amr,
// then continues the pending authorization request (request), or goes to
// returnTo.
func (s *Server) signedIn(w http.ResponseWriter, r *http.Request, site *tenant.Site, userID, email, request, returnTo string, amr []string) {
	ctx := r.Context()
	_ = s.sessions.Destroy(w, r, site) // a new session ID at every sign-in (no fixation)
	sess, err := s.sessions.CreateWith(w, r, site, userID, amr)
	if err != nil {
		s.unavailablePage(w, r, site, err)
		return
	}
	s.audit(ctx, site.ID, userID, "login.succeeded", email, r, map[string]any{"amr": amr})
	s.rememberLanguage(w, r, userID)
	if request == "" {
		target := returnTo
		if target == "" {
			target = "/account/connections"
		}
		http.Redirect(w, r, target, http.StatusSeeOther)
		return
	}
	if ar, client, ok := s.pendingFor(w, r, site, request); ok {
		s.proceed(w, r, site, client, ar, sess, nil)
	}
}

// pendingFor reads the pending authorization request id and its client;
// when it cannot (expired, unknown client, storage down) it answers the
// page itself and returns false.
func (s *Server) pendingFor(w http.ResponseWriter, r *http.Request, site *tenant.Site, id string) (*authRequest, *Client, bool) {
	ar, err := s.pending(r.Context(), site.ID, id)
	if err != nil {
		s.unavailablePage(w, r, site, err)
		return nil, nil, false
	}
	if ar == nil {
		s.expiredPage(w, r, site)
		return nil, nil, false
	}
	client, err := s.client(r.Context(), site, ar.ClientID)
	if err != nil {
		s.errorPage(w, r, site, http.StatusBadRequest, codeInvalidClient, "The application is no longer registered.", "")
		return nil, nil, false
	}
	return ar, client, true
}

// Continue serves GET /login/continue?auth_request=: a signed-in person
// returns to a pending authorization request (after enrolling a second
// factor, or after a passkey sign-in, whose page is a script).
func (s *Server) Continue(w http.ResponseWriter, r *http.Request) {
	site := siteOf(r.Context())
	ar, client, ok := s.pendingFor(w, r, site, r.URL.Query().Get("auth_request"))
	if !ok {
		return
	}
	sess, err := s.sessions.Get(r, site)
	if err != nil {
		s.unavailablePage(w, r, site, err)
		return
	}
	if sess == nil {
		http.Redirect(w, r, "/login?auth_request="+url.QueryEscape(ar.ID), http.StatusFound)
		return
	}
	s.proceed(w, r, site, client, ar, sess, nil)
}

// staffNeedsFactor reports whether the site makes this person, who holds a
// staff role, prove a second factor they have not proved in sess.
func staffNeedsFactor(site *tenant.Site, roles []string, sess *session.Session) bool {
	return site.StaffMFA && slices.ContainsFunc(roles, storage.IsOperatorRole) && !sess.MFA()
}

// requireFactor sends a staff member whose session has one factor to get
// the second: to sign in again with it, or, without one, to enrol one on
// the account page; both come back to the request.
func (s *Server) requireFactor(w http.ResponseWriter, r *http.Request, site *tenant.Site, ar *authRequest, sess *session.Session) {
	ctx := r.Context()
	if !s.holdPending(w, r, site, ar, sess.UserID) {
		return
	}
	totpOn, keys, err := mfa.HasFactor(ctx, s.store, site.ID, sess.UserID)
	if err != nil {
		s.unavailablePage(w, r, site, err)
		return
	}
	s.audit(ctx, site.ID, sess.UserID, "authorization.factor_required", ar.ClientID, r, nil)
	if totpOn || (keys > 0 && mfa.Available(site)) {
		http.Redirect(w, r, "/login?step_up=1&auth_request="+url.QueryEscape(ar.ID), http.StatusFound)
		return
	}
	http.Redirect(w, r, "/account/security?required=1&continue="+url.QueryEscape("/login/continue?auth_request="+ar.ID), http.StatusFound)
}

// Limits on starting passkey ceremonies (each holds a cache entry for
// mfa.CeremonyLifetime).
var (
	passkeyPerIP   = storage.Limit{Rate: 30, Period: time.Minute, Burst: 30}
	passkeyPerSite = storage.Limit{Rate: 1200, Period: time.Minute, Burst: 600}
)

// passkeyJSON answers the passkey script; its error is a sentence the page
// shows, in the page's language.
func passkeyJSON(w http.ResponseWriter, r *http.Request, status int, v mfa.Answer) {
	if site, ok := tenant.FromContext(r.Context()); ok {
		v.Error = i18n.Text(i18n.Resolve(r, site.Locale), v.Error)
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, status, v)
}

// passkeyForm reads a passkey script's form post and checks its origin
// and anti-forgery token; false when it answered already.
func (s *Server) passkeyForm(w http.ResponseWriter, r *http.Request, site *tenant.Site) bool {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		passkeyJSON(w, r, http.StatusMethodNotAllowed, mfa.Answer{Error: "This address takes POST requests."})
		return false
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		if _, ok := tooLarge(err); ok {
			passkeyJSON(w, r, http.StatusRequestEntityTooLarge, mfa.Answer{Error: "The form is larger than this page accepts. Nothing was changed."})
			return false
		}
		passkeyJSON(w, r, http.StatusBadRequest, mfa.Answer{Error: "The request could not be read."})
		return false
	}
	if !mfa.Available(site) {
		passkeyJSON(w, r, http.StatusNotFound, mfa.Answer{Error: "Passkeys are not available at this address."})
		return false
	}
	if !session.CheckCSRF(r, site, nil) {
		passkeyJSON(w, r, http.StatusForbidden, mfa.Answer{Error: "Your sign-in form expired. Reload the page and try again."})
		return false
	}
	return true
}

// PasskeyBegin serves POST /login/passkey/begin: the options of a passkey
// sign-in, for any passkey of the site (step empty: without a password)
// or for the person of a second-factor step.
func (s *Server) PasskeyBegin(w http.ResponseWriter, r *http.Request) {
	site := siteOf(r.Context())
	ctx := r.Context()
	if !s.passkeyForm(w, r, site) {
		return
	}
	rp, err := mfa.PartyOf(site)
	if err != nil {
		passkeyJSON(w, r, http.StatusNotFound, mfa.Answer{Error: "Passkeys are not available at this address."})
		return
	}
	// Each ceremony is kept in the cache for 5 minutes, and anyone may
	// start one: limited per address (across sites) and per site, like
	// pending authorization requests, so they cannot fill the cache.
	ok, retry, err := s.cache.Allow(ctx, storage.AddressKey(throttle.Address(tenant.ClientIP(r)), "rl:passkey"), passkeyPerIP)
	if err == nil && ok {
		ok, retry, err = s.leased.Allow(ctx, storage.CacheKey(site.ID, "rl:passkey", "site"), passkeyPerSite)
	}
	if err != nil {
		passkeyJSON(w, r, http.StatusServiceUnavailable, mfa.Answer{Error: unavailableText})
		return
	}
	if !ok {
		w.Header().Set("Retry-After", strconv.Itoa(max(1, int(retry.Seconds()+0.999))))
		passkeyJSON(w, r, http.StatusTooManyRequests, mfa.Answer{Error: "Too many passkey sign-ins are being started here. Try again in a moment."})
		return
	}
	c := &mfa.Ceremony{Request: r.PostFormValue("auth_request"), ReturnTo: localPath(r.PostFormValue("return_to"))}
	var options any
	if step := r.PostFormValue("step"); step != "" {
		st, err := s.loadStep(ctx, r, site, step)
		if err != nil {
			passkeyJSON(w, r, http.StatusServiceUnavailable, mfa.Answer{Error: unavailableText})
			return
		}
		if st == nil {
			passkeyJSON(w, r, http.StatusBadRequest, mfa.Answer{Error: "This sign-in has expired. Sign in again."})
			return
		}
		acct, err := mfa.AccountAt(ctx, s.store, site.ID, st.UserID)
		if err != nil {
			passkeyJSON(w, r, http.StatusServiceUnavailable, mfa.Answer{Error: unavailableText})
			return
		}
		c.UserID, c.Request, c.ReturnTo, c.Step = st.UserID, st.Request, st.ReturnTo, step
		if options, err = rp.BeginLogin(acct, c); err != nil {
			passkeyJSON(w, r, http.StatusBadRequest, mfa.Answer{Error: "You have no passkey at this site."})
			return
		}
	} else if options, err = rp.BeginDiscoverable(c); err != nil {
		passkeyJSON(w, r, http.StatusServiceUnavailable, mfa.Answer{Error: unavailableText})
		return
	}
	id, err := mfa.SaveCeremony(ctx, s.cache, site.ID, c)
	if err != nil {
		passkeyJSON(w, r, http.StatusServiceUnavailable, mfa.Answer{Error: unavailableText})
		return
	}
	passkeyJSON(w, r, http.StatusOK, mfa.Answer{Ceremony: id, Options: options})
}

// PasskeyFinish serves POST /login/passkey/finish: the authenticator's
// answer. A valid one signs the person in and answers where to go next.
func (s *Server) PasskeyFinish(w http.ResponseWriter, r *http.Request) {
	site := siteOf(r.Context())
	ctx := r.Context()
	if !s.passkeyForm(w, r, site) {
		return
	}
	c, err := mfa.TakeCeremony(ctx, s.cache, site.ID, r.PostFormValue("ceremony"))
	if err != nil {
		passkeyJSON(w, r, http.StatusServiceUnavailable, mfa.Answer{Error: unavailableText})
		return
	}
	if c == nil || (c.UserID == "") != (c.Step == "") {
		passkeyJSON(w, r, http.StatusBadRequest, mfa.Answer{Error: "This passkey request has expired. Try again."})
		return
	}
	refused := func() {
		s.audit(ctx, site.ID, c.UserID, "login.passkey_failed", "", r, nil)
		passkeyJSON(w, r, http.StatusUnauthorized, mfa.Answer{Error: "That passkey could not be used to sign in here."})
	}
	rp, err := mfa.PartyOf(site)
	if err != nil {
		refused()
		return
	}
	credential := r.PostFormValue("credential")
	var acct *mfa.Account
	amr := []string{session.AMRHardware, session.AMRMulti}
	if c.UserID != "" {
		// The second factor of a step: the step must still be this
		// browser's, and the passkey the person's.
		st, err := s.loadStep(ctx, r, site, c.Step)
		if err != nil || st == nil || st.UserID != c.UserID {
			refused()
			return
		}
		if acct, err = mfa.AccountAt(ctx, s.store, site.ID, c.UserID); err != nil {
			refused()
			return
		}
		if err := rp.FinishLogin(ctx, s.store, acct, c, credential, s.now()); err != nil {
			refused()
			return
		}
		_ = s.cache.Delete(ctx, factorKey(site.ID, c.Step))
		amr = []string{session.AMRPassword, session.AMRHardware, session.AMRMulti}
	} else if acct, err = rp.FinishDiscoverable(ctx, s.store, c, credential, s.now()); err != nil {
		refused()
		return
	}
	// The session starts here; the page's script follows the redirect.
	_ = s.sessions.Destroy(w, r, site)
	if _, err := s.sessions.CreateWith(w, r, site, acct.User.ID, amr); err != nil {
		passkeyJSON(w, r, http.StatusServiceUnavailable, mfa.Answer{Error: unavailableText})
		return
	}
	s.audit(ctx, site.ID, acct.User.ID, "login.succeeded", acct.User.Email, r, map[string]any{"amr": amr})
	next := c.ReturnTo
	switch {
	case c.Request != "":
		next = "/login/continue?auth_request=" + url.QueryEscape(c.Request)
	case next == "":
		next = "/account/connections"
	}
	passkeyJSON(w, r, http.StatusOK, mfa.Answer{Redirect: next})
}

// isStepUp: the sign-in page was opened to prove a second factor.
func isStepUp(r *http.Request) bool { return strings.TrimSpace(r.URL.Query().Get("step_up")) == "1" }
