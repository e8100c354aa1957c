package web

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lectern/lectern/i18n"
	"github.com/lectern/lectern/internal/platform"
	"github.com/lectern/lectern/mfa"
	"github.com/lectern/lectern/session"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

const securityPath = "/account/security"

// securityData is the account's security page: passkeys, authenticator
// app, recovery codes and browser sessions.
type securityData struct {
	chrome
	Narrow bool
	// Required: the site asks staff for a second factor and this person
	// has none; Continue is where they were going.
	Required bool
	Continue string
	// PasskeysAvailable: the site is on a domain (WebAuthn needs one).
	PasskeysAvailable bool
	Passkeys          []passkeyRow
	TOTP              bool
	RecoveryLeft      int
	Sessions          []sessionRow
	SessionsMax       int
	// HasPassword: adding a factor asks for the current password.
	HasPassword bool
	// Proof says why this session cannot change the account's factors
	// (factorProved), ProofSignIn that signing in again here would
	// prove one, at SignInURL.
	Proof       string
	ProofSignIn bool
	SignInURL   string
	// PasskeyError and TOTPError say why a change in that section was
	// refused, ErrorSignIn that signing in again would help.
	PasskeyError string
	TOTPError    string
	ErrorSignIn  bool
}

type passkeyRow struct {
	ID       int64
	Name     string
	Created  when
	LastUsed when
}

type sessionRow struct {
	Handle   string
	Device   string
	Place    string
	LastSeen when
	Current  bool
	Factors  string
}

// security serves GET /account/security.
func (h *Handler) security(w http.ResponseWriter, r *http.Request, rq *request) {
	d := securityData{Required: r.URL.Query().Get("required") == "1", Continue: continueTarget(r.URL.Query().Get("continue"))}
	h.securityPage(w, r, rq, http.StatusOK, d, h.takeFlash(r.Context(), rq))
}

// refuseFactorChange shows the security page again with why a change of
// factors was refused, in section ("passkeys" or "totp").
func (h *Handler) refuseFactorChange(w http.ResponseWriter, r *http.Request, rq *request, f *factorRefusal, section string) {
	if f.RetryAfter != "" {
		w.Header().Set("Retry-After", f.RetryAfter)
	}
	d := securityData{Continue: continueTarget(r.PostFormValue("continue")), ErrorSignIn: f.SignIn}
	if section == "totp" {
		d.TOTPError = f.Message
	} else {
		d.PasskeyError = f.Message
	}
	h.securityPage(w, r, rq, f.Status, d, nil)
}

// securityPage renders the security page from d's request-specific
// fields and what the account has.
func (h *Handler) securityPage(w http.ResponseWriter, r *http.Request, rq *request, status int, d securityData, f *flash) {
	ctx := r.Context()
	d.chrome, d.Narrow, d.SessionsMax = chromeFor(rq, "account", "security"), true, h.sessions.Max()
	d.PasskeysAvailable, d.HasPassword, d.SignInURL = mfa.Available(rq.site), rq.user.PasswordHash != "", signInAgainURL
	switch proof, err := h.factorProved(ctx, rq); {
	case err != nil:
		h.fail(w, r, rq, err)
		return
	case proof != nil:
		d.Proof, d.ProofSignIn = proof.Message, proof.SignIn
	}
	keys, err := h.store.Passkeys(ctx, rq.site.ID, rq.user.ID)
	if err != nil {
		h.fail(w, r, rq, err)
		return
	}
	for _, k := range keys {
		row := passkeyRow{ID: k.ID, Name: k.Name, Created: h.when(k.CreatedAt)}
		if k.LastUsedAt != nil {
			row.LastUsed = h.when(*k.LastUsedAt)
		}
		d.Passkeys = append(d.Passkeys, row)
	}
	switch _, err := h.store.TOTPOf(ctx, rq.user.ID); {
	case err == nil:
		d.TOTP = true
		if d.RecoveryLeft, err = h.store.RecoveryCodesLeft(ctx, rq.user.ID); err != nil {
			h.fail(w, r, rq, err)
			return
		}
	case !errors.Is(err, storage.ErrNotFound):
		h.fail(w, r, rq, err)
		return
	}
	sessions, err := h.sessions.List(ctx, rq.user.ID)
	if err != nil {
		h.fail(w, r, rq, err)
		return
	}
	me := rq.sess.Handle()
	here := tenant.ClientIP(r)
	for _, s := range sessions {
		if s.SiteID != rq.site.ID {
			continue // another school's sessions are listed there
		}
		l := lang(r, rq)
		d.Sessions = append(d.Sessions, sessionRow{Handle: s.Handle, Device: deviceOf(l, s.UserAgent), Place: placeOf(l, s.IP, here),
			LastSeen: h.when(s.Touched), Current: s.Handle == me, Factors: factorWords(l, s.AMR)})
	}
	h.render(w, r, rq, status, "account_security", "Sign-in and security", d, f)
}

// continueTarget accepts only a path of this site to continue to.
func continueTarget(p string) string {
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || strings.ContainsAny(p, "\\\t\r\n ") || len(p) > 2048 {
		return ""
	}
	return p
}

// deviceOf names a browser and system from a User-Agent, roughly: enough
// for a person to tell their phone from their laptop, in lang (the
// products' names stay as they are).
func deviceOf(lang, ua string) string {
	if ua == "" {
		return i18n.T(lang, "web.security.unknown_device")
	}
	browser := i18n.T(lang, "web.security.browser")
	for _, b := range []struct{ token, name string }{
		{"Edg/", "Edge"}, {"OPR/", "Opera"}, {"Firefox/", "Firefox"}, {"HeadlessChrome/", "Chrome (headless)"},
		{"Chrome/", "Chrome"}, {"Safari/", "Safari"}, {"curl/", "curl"},
	} {
		if strings.Contains(ua, b.token) {
			browser = b.name
			break
		}
	}
	system := ""
	for _, o := range []struct{ token, name string }{
		{"Android", "Android"}, {"iPhone", "iPhone"}, {"iPad", "iPad"}, {"Windows", "Windows"},
		{"Mac OS X", "macOS"}, {"CrOS", "ChromeOS"}, {"Linux", "Linux"},
	} {
		if strings.Contains(ua, o.token) {
			system = o.name
			break
		}
	}
	if system == "" {
		return browser
	}
	return i18n.T(lang, "web.security.device", "Browser", browser, "System", system)
}

// placeOf says roughly where a session signed in from. Lectern ships no
// GeoIP database: it shows the network (the IPv4 /24 or IPv6 /48), or
// "this network" when it is the one the page is viewed from.
func placeOf(lang, ip, here string) string {
	p := networkOf(ip)
	switch {
	case p == "":
		return i18n.T(lang, "web.security.unknown_network")
	case p == networkOf(here):
		return i18n.T(lang, "web.security.this_network", "Net", p)
	}
	return i18n.T(lang, "web.security.network", "Net", p)
}

func networkOf(s string) string {
	ip := net.ParseIP(s)
	if ip == nil {
		return ""
	}
	if v4 := ip.To4(); v4 != nil {
		return (&net.IPNet{IP: v4.Mask(net.CIDRMask(24, 32)), Mask: net.CIDRMask(24, 32)}).String()
	}
	return (&net.IPNet{IP: ip.Mask(net.CIDRMask(48, 128)), Mask: net.CIDRMask(48, 128)}).String()
}

// factorWords says in lang what a session was signed in with.
func factorWords(lang string, amr []string) string {
	var words []string
	for _, m := range amr {
		switch m {
		case session.AMRPassword:
			words = append(words, i18n.T(lang, "web.security.factor_password"))
		case session.AMROTP:
			words = append(words, i18n.T(lang, "web.security.factor_totp"))
		case session.AMRHardware:
			words = append(words, i18n.T(lang, "web.security.factor_passkey"))
		}
	}
	if len(words) == 0 {
		return i18n.T(lang, "web.security.factor_password")
	}
	return strings.Join(words, " + ")
}

// sessionEnd serves POST /account/security/sessions/{handle}/end. Another
// site's or another person's session is not found.
func (h *Handler) sessionEnd(w http.ResponseWriter, r *http.Request, rq *request) {
	handle := r.PathValue("handle")
	ok, err := h.sessions.End(r.Context(), rq.site.ID, rq.user.ID, handle)
	if err != nil {
		h.fail(w, r, rq, err)
		return
	}
	if !ok {
		h.notFound(w, r, rq)
		return
	}
	h.audit(r, rq, "session.ended", rq.user.ID, nil)
	if handle == rq.sess.Handle() {
		seeOther(w, r, "/login")
		return
	}
	_ = h.setFlash(r.Context(), rq, flash{Kind: "ok", Message: "That session was signed out."})
	seeOther(w, r, securityPath)
}

// sessionEndAll serves POST /account/security/sessions/end-all: every
// session of the person at this site ends, this one too.
func (h *Handler) sessionEndAll(w http.ResponseWriter, r *http.Request, rq *request) {
	ctx := r.Context()
	list, err := h.sessions.List(ctx, rq.user.ID)
	if err != nil {
		h.fail(w, r, rq, err)
		return
	}
	for _, s := range list {
		if s.SiteID != rq.site.ID {
			continue
		}
		if _, err := h.sessions.End(ctx, rq.site.ID, rq.user.ID, s.Handle); err != nil {
			h.fail(w, r, rq, err)
			return
		}
	}
	h.audit(r, rq, "session.ended_all", rq.user.ID, nil)
	_ = h.sessions.Destroy(w, r, rq.site)
	seeOther(w, r, "/login")
}

// TOTP enrolment: the new secret waits in the cache, under the session,
// until the person confirms a code from their app.
const totpEnrolLifetime = 15 * time.Minute

func totpEnrolKey(rq *request) string {
	return storage.CacheKey(rq.site.ID, "totp-enrol", rq.sess.Handle())
}

type totpEnrolData struct {
	chrome
	Narrow   bool
	Secret   string
	URL      string
	Error    string
	Continue string
}

// totpStart serves POST /account/security/totp: a new secret to scan, for
// the current password (mayAddFactor). Only a start that passed writes the
// pending secret the confirmation needs.
func (h *Handler) totpStart(w http.ResponseWriter, r *http.Request, rq *request) {
	switch f, err := h.mayAddFactor(r, rq, "totp_setup"); {
	case err != nil:
		h.fail(w, r, rq, err)
		return
	case f != nil:
		h.refuseFactorChange(w, r, rq, f, "totp")
		return
	}
	key, err := mfa.NewEnrolment(rq.site.Name, rq.user.Email)
	if err != nil {
		h.fail(w, r, rq, err)
		return
	}
	if err := h.cache.Set(r.Context(), totpEnrolKey(rq), []byte(key.URL), totpEnrolLifetime); err != nil {
		h.fail(w, r, rq, err)
		return
	}
	h.renderTOTPEnrol(w, r, rq, http.StatusOK, key, "", continueTarget(r.PostFormValue("continue")))
}

func (h *Handler) renderTOTPEnrol(w http.ResponseWriter, r *http.Request, rq *request, status int, key mfa.Enrolment, msg, cont string) {
	d := totpEnrolData{chrome: chromeFor(rq, "account", "security"), Narrow: true, Secret: key.Secret, URL: key.URL, Error: msg, Continue: cont}
	h.render(w, r, rq, status, "account_totp", "Set up an authenticator app", d, nil)
}

func (h *Handler) pendingTOTP(ctx context.Context, rq *request) (mfa.Enrolment, error) {
	raw, err := h.cache.Get(ctx, totpEnrolKey(rq))
	if err != nil {
		return mfa.Enrolment{}, err
	}
	return mfa.EnrolmentFromURL(string(raw))
}

// totpQR serves GET /account/security/totp/qr.png: the pending secret as
// a QR code (the page's CSP admits images of this origin only).
func (h *Handler) totpQR(w http.ResponseWriter, r *http.Request, rq *request) {
	key, err := h.pendingTOTP(r.Context(), rq)
	if errors.Is(err, storage.ErrCacheMiss) {
		h.notFound(w, r, rq)
		return
	}
	if err != nil {
		h.fail(w, r, rq, err)
		return
	}
	img, err := key.QRCode(240)
	if err != nil {
		h.fail(w, r, rq, err)
		return
	}
	w.Header().Set("Content-Type", "image/png")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(img)
}

type recoveryData struct {
	chrome
	Narrow   bool
	Codes    []string
	Continue string
}

// totpConfirm serves POST /account/security/totp/confirm: the first code
// from the app turns it on, and the recovery codes are shown, once.
func (h *Handler) totpConfirm(w http.ResponseWriter, r *http.Request, rq *request) {
	ctx := r.Context()
	cont := continueTarget(r.PostFormValue("continue"))
	key, err := h.pendingTOTP(ctx, rq)
	if errors.Is(err, storage.ErrCacheMiss) {
		h.problem(w, r, rq, http.StatusBadRequest, "Setup expired", "The authenticator setup took too long. Nothing was changed.", "Start again from Sign-in and security.")
		return
	}
	if err != nil {
		h.fail(w, r, rq, err)
		return
	}
	// The password was checked when the setup started; whether this
	// session must have proved a factor is checked again (one may have
	// been added meanwhile).
	switch f, err := h.factorProved(ctx, rq); {
	case err != nil:
		h.fail(w, r, rq, err)
		return
	case f != nil:
		h.problem(w, r, rq, f.Status, "Sign in again first", f.Message, "Nothing was changed.")
		return
	}
	checker := &mfa.Checker{Store: h.store, Cache: h.cache, Now: h.now}
	step, ok, err := checker.CheckNew(ctx, rq.user.ID, key.Secret, r.PostFormValue("code"))
	switch {
	case errors.Is(err, mfa.ErrThrottled):
		w.Header().Set("Retry-After", "900")
		h.renderTOTPEnrol(w, r, rq, http.StatusTooManyRequests, key, "Too many wrong codes. Wait 15 minutes and try again.", cont)
		return
	case err != nil:
		h.fail(w, r, rq, err)
		return
	case !ok:
		h.renderTOTPEnrol(w, r, rq, http.StatusUnprocessableEntity, key, "That code is not right. Enter the 6-digit code your app shows now.", cont)
		return
	}
	replaced := false
	switch _, err := h.store.TOTPOf(ctx, rq.user.ID); {
	case err == nil:
		replaced = true
	case !errors.Is(err, storage.ErrNotFound):
		h.fail(w, r, rq, err)
		return
	}
	codes, hashes := mfa.NewRecoveryCodes()
	if err := h.store.EnableTOTP(ctx, &storage.TOTP{UserID: rq.user.ID, Secret: key.Secret, LastStep: step, CreatedAt: h.now()}, hashes); err != nil {
		h.fail(w, r, rq, err)
		return
	}
	_ = h.cache.Delete(ctx, totpEnrolKey(rq))
	// The person just proved the app: this session has two factors now.
	if err := h.sessions.AddFactors(ctx, rq.sess, session.AMROTP); err != nil {
		h.logger.WarnContext(ctx, "session factors not updated", "err", err)
	}
	if replaced {
		h.audit(r, rq, "account.totp_enabled", rq.user.ID, map[string]any{"replaced": true})
		h.notifyFactor(r, rq, platform.FactorAppReplaced, "")
	} else {
		h.audit(r, rq, "account.totp_enabled", rq.user.ID, nil)
		h.notifyFactor(r, rq, platform.FactorAppAdded, "")
	}
	d := recoveryData{chrome: chromeFor(rq, "account", "security"), Narrow: true, Codes: codes, Continue: cont}
	h.render(w, r, rq, http.StatusOK, "account_recovery", "Your recovery codes", d, nil)
}

// totpDisable serves POST /account/security/totp/disable: a current code
// (or a recovery code) turns the app off and ends the recovery codes.
func (h *Handler) totpDisable(w http.ResponseWriter, r *http.Request, rq *request) {
	ctx := r.Context()
	checker := &mfa.Checker{Store: h.store, Cache: h.cache, Now: h.now}
	ok, err := checker.Check(ctx, rq.user.ID, r.PostFormValue("code"))
	switch {
	case errors.Is(err, mfa.ErrThrottled):
		w.Header().Set("Retry-After", "900")
		h.problem(w, r, rq, http.StatusTooManyRequests, "Too many wrong codes", "Nothing was changed.", "Wait 15 minutes and try again.")
		return
	case err != nil:
		h.fail(w, r, rq, err)
		return
	case !ok:
		h.problem(w, r, rq, http.StatusUnprocessableEntity, "That code is not right",
			"The authenticator app stays on. Nothing was changed.", "Go back and enter the current code from your app, or a recovery code.")
		return
	}
	if err := h.store.DisableTOTP(ctx, rq.user.ID); err != nil {
		h.fail(w, r, rq, err)
		return
	}
	h.audit(r, rq, "account.totp_disabled", rq.user.ID, nil)
	h.notifyFactor(r, rq, platform.FactorAppRemoved, "")
	_ = h.setFlash(ctx, rq, flash{Kind: "ok", Message: "The authenticator app is off, and its recovery codes no longer work."})
	seeOther(w, r, securityPath)
}

// writePasskeyJSON answers a passkey ceremony's request; its error is a
// sentence the page shows, in the page's language.
func writePasskeyJSON(w http.ResponseWriter, r *http.Request, rq *request, status int, v mfa.Answer) {
	v.Error = i18n.Text(lang(r, rq), v.Error)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// passkeyBegin serves POST /account/security/passkeys/begin: the options
// to create a passkey for the signed-in person at this site, for the
// current password (mayAddFactor). Only a begin that passed starts the
// registration ceremony the finish needs.
func (h *Handler) passkeyBegin(w http.ResponseWriter, r *http.Request, rq *request) {
	ctx := r.Context()
	p, err := mfa.PartyOf(rq.site)
	if err != nil || !mfa.Available(rq.site) {
		writePasskeyJSON(w, r, rq, http.StatusNotFound, mfa.Answer{Error: "Passkeys are not available at this address."})
		return
	}
	switch f, err := h.mayAddFactor(r, rq, "passkey_add"); {
	case err != nil:
		writePasskeyJSON(w, r, rq, http.StatusServiceUnavailable, mfa.Answer{Error: "Lectern could not start this now. Try again."})
		return
	case f != nil:
		if f.RetryAfter != "" {
			w.Header().Set("Retry-After", f.RetryAfter)
		}
		writePasskeyJSON(w, r, rq, f.Status, mfa.Answer{Error: f.Message})
		return
	}
	acct, err := mfa.AccountAt(ctx, h.store, rq.site.ID, rq.user.ID)
	if err != nil {
		writePasskeyJSON(w, r, rq, http.StatusServiceUnavailable, mfa.Answer{Error: "Lectern could not start this now. Try again."})
		return
	}
	// Each ceremony holds a cache entry for a few minutes: a person starts
	// a few at most.
	if ok, _, err := h.cache.Allow(ctx, storage.CacheKey(rq.site.ID, "rl:passkey-add", rq.user.ID), passkeyAddLimit); err != nil || !ok {
		writePasskeyJSON(w, r, rq, http.StatusTooManyRequests, mfa.Answer{Error: "Too many passkeys were started. Wait a minute and try again."})
		return
	}
	if len(acct.Passkeys) >= maxPasskeys {
		writePasskeyJSON(w, r, rq, http.StatusConflict, mfa.Answer{Error: h.t(r, rq, "web.security.too_many_passkeys", "Max", maxPasskeys)})
		return
	}
	c := &mfa.Ceremony{ReturnTo: continueTarget(r.PostFormValue("continue"))}
	opts, err := p.BeginRegistration(acct, c)
	if err != nil {
		writePasskeyJSON(w, r, rq, http.StatusServiceUnavailable, mfa.Answer{Error: "Lectern could not start this now. Try again."})
		return
	}
	id, err := mfa.SaveCeremony(ctx, h.cache, rq.site.ID, c)
	if err != nil {
		writePasskeyJSON(w, r, rq, http.StatusServiceUnavailable, mfa.Answer{Error: "Lectern could not start this now. Try again."})
		return
	}
	writePasskeyJSON(w, r, rq, http.StatusOK, mfa.Answer{Ceremony: id, Options: opts})
}

// maxPasskeys bounds one account's passkeys at one site.
const maxPasskeys = 20

var passkeyAddLimit = storage.Limit{Rate: 10, Period: time.Minute, Burst: 10}

// passkeyFinish serves POST /account/security/passkeys/finish: the
// authenticator's new credential is checked and kept.
func (h *Handler) passkeyFinish(w http.ResponseWriter, r *http.Request, rq *request) {
	ctx := r.Context()
	p, err := mfa.PartyOf(rq.site)
	if err != nil {
		writePasskeyJSON(w, r, rq, http.StatusNotFound, mfa.Answer{Error: "Passkeys are not available at this address."})
		return
	}
	c, err := mfa.TakeCeremony(ctx, h.cache, rq.site.ID, r.PostFormValue("ceremony"))
	if err != nil {
		writePasskeyJSON(w, r, rq, http.StatusServiceUnavailable, mfa.Answer{Error: "Lectern could not finish this now. Try again."})
		return
	}
	if c == nil || !c.Registration || c.UserID != rq.user.ID {
		writePasskeyJSON(w, r, rq, http.StatusBadRequest, mfa.Answer{Error: "This request expired. Try again."})
		return
	}
	switch f, err := h.factorProved(ctx, rq); {
	case err != nil:
		writePasskeyJSON(w, r, rq, http.StatusServiceUnavailable, mfa.Answer{Error: "Lectern could not finish this now. Try again."})
		return
	case f != nil:
		writePasskeyJSON(w, r, rq, f.Status, mfa.Answer{Error: f.Message})
		return
	}
	acct, err := mfa.AccountAt(ctx, h.store, rq.site.ID, rq.user.ID)
	if err != nil {
		writePasskeyJSON(w, r, rq, http.StatusServiceUnavailable, mfa.Answer{Error: "Lectern could not finish this now. Try again."})
		return
	}
	name := strings.TrimSpace(r.PostFormValue("name"))
	if name == "" {
		name = deviceOf(lang(r, rq), r.UserAgent())
	}
	name = clip(name, 80)
	if _, err := p.FinishRegistration(ctx, h.store, acct, c, r.PostFormValue("credential"), name, h.now()); err != nil {
		writePasskeyJSON(w, r, rq, http.StatusBadRequest, mfa.Answer{Error: "The passkey could not be added."})
		return
	}
	if err := h.sessions.AddFactors(ctx, rq.sess, session.AMRHardware); err != nil {
		h.logger.WarnContext(ctx, "session factors not updated", "err", err)
	}
	h.audit(r, rq, "account.passkey_added", rq.user.ID, map[string]any{"name": name})
	h.notifyFactor(r, rq, platform.FactorPasskeyAdded, name)
	_ = h.setFlash(ctx, rq, flash{Kind: "ok", Message: h.t(r, rq, "web.security.passkey_added", "Name", name, "Site", rq.site.Name)})
	next := securityPath
	if c.ReturnTo != "" {
		next = c.ReturnTo
	}
	writePasskeyJSON(w, r, rq, http.StatusOK, mfa.Answer{Redirect: next})
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n])
	}
	return s
}

func passkeyID(r *http.Request) int64 {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0
	}
	return id
}

// passkeyRename serves POST /account/security/passkeys/{id}/rename.
func (h *Handler) passkeyRename(w http.ResponseWriter, r *http.Request, rq *request) {
	name := clip(strings.TrimSpace(r.PostFormValue("name")), 80)
	if name == "" {
		h.problem(w, r, rq, http.StatusUnprocessableEntity, "Name missing", "A passkey needs a name. Nothing was changed.", "Go back and enter a name.")
		return
	}
	switch err := h.store.RenamePasskey(r.Context(), rq.site.ID, rq.user.ID, passkeyID(r), name); {
	case errors.Is(err, storage.ErrNotFound):
		h.notFound(w, r, rq)
		return
	case err != nil:
		h.fail(w, r, rq, err)
		return
	}
	_ = h.setFlash(r.Context(), rq, flash{Kind: "ok", Message: h.t(r, rq, "web.security.passkey_renamed", "Name", name)})
	seeOther(w, r, securityPath)
}

// passkeyRemove serves POST /account/security/passkeys/{id}/remove, from a
// session that proved a second factor (the passkey is one at this site,
// so its owner can prove one here).
func (h *Handler) passkeyRemove(w http.ResponseWriter, r *http.Request, rq *request) {
	ctx := r.Context()
	keys, err := h.store.Passkeys(ctx, rq.site.ID, rq.user.ID)
	if err != nil {
		h.fail(w, r, rq, err)
		return
	}
	id := passkeyID(r)
	i := slices.IndexFunc(keys, func(k storage.Passkey) bool { return k.ID == id })
	if i < 0 {
		h.notFound(w, r, rq)
		return
	}
	if !rq.sess.MFA() {
		h.refuseFactorChange(w, r, rq, &factorRefusal{Status: http.StatusForbidden, SignIn: true,
			Message: "To change your second factors, first sign in again with your second factor."}, "passkeys")
		return
	}
	switch err := h.store.DeletePasskey(ctx, rq.site.ID, rq.user.ID, id); {
	case errors.Is(err, storage.ErrNotFound):
		h.notFound(w, r, rq)
		return
	case err != nil:
		h.fail(w, r, rq, err)
		return
	}
	h.audit(r, rq, "account.passkey_removed", rq.user.ID, map[string]any{"name": keys[i].Name})
	h.notifyFactor(r, rq, platform.FactorPasskeyRemoved, keys[i].Name)
	_ = h.setFlash(r.Context(), rq, flash{Kind: "ok", Message: "Passkey removed. It can no longer sign in here."})
	seeOther(w, r, securityPath)
}

// staffFactor enforces the site's "staff must use a second factor" in the
// admin area: a session without one goes to sign in again with it, or,
// for a person who has none, to enrol one. It reports whether it answered.
func (h *Handler) staffFactor(w http.ResponseWriter, r *http.Request, rq *request) bool {
	if rq.stored == nil || !rq.stored.Accounts().StaffMFA || rq.sess.MFA() {
		return false
	}
	totpOn, keys, err := mfa.HasFactor(r.Context(), h.store, rq.site.ID, rq.user.ID)
	if err != nil {
		h.fail(w, r, rq, err)
		return true
	}
	back := r.URL.RequestURI()
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		back = "/admin"
	}
	if totpOn || (keys > 0 && mfa.Available(rq.site)) {
		seeOther(w, r, "/login?step_up=1&return_to="+url.QueryEscape(back))
		return true
	}
	seeOther(w, r, securityPath+"?required=1&continue="+url.QueryEscape(back))
	return true
}
