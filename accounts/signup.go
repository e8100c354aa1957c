package accounts

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/lectern/lectern/i18n"
	"github.com/lectern/lectern/internal/platform"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

type signUpData struct {
	Request, Name, Email, Error string
}

// browserCookie names the cookie that tells the browser that signed up
// from any other: only that browser is signed in by the verification
// link and continues the interrupted authorization.
func browserCookie(site *tenant.Site) string {
	name := "lectern_signup_" + strconv.FormatInt(int64(site.ID), 10)
	if site.Secure() {
		return "__Host-" + name
	}
	return name
}

// validRequest keeps an authorization request reference only if it has the
// form of one (authserver's 256-bit IDs); authserver checks the rest.
func validRequest(s string) string {
	if len(s) != 43 {
		return ""
	}
	if _, err := base64.RawURLEncoding.DecodeString(s); err != nil {
		return ""
	}
	return s
}

func (h *Handler) signUpClosed(w http.ResponseWriter, r *http.Request) {
	h.message(w, r, http.StatusNotFound, "Sign-up is not open", msg{Alert: true,
		Message: h.t(r, "accounts.signup.closed", "Site", siteOf(r).Name),
		Links:   []pageLink{{Label: "Sign in", URL: "/login"}}})
}

// signUp serves GET /signup.
func (h *Handler) signUp(w http.ResponseWriter, r *http.Request) {
	if !siteOf(r).SignUp {
		h.signUpClosed(w, r)
		return
	}
	h.render(w, r, http.StatusOK, "accounts_signup", "Create an account", signUpData{Request: validRequest(r.URL.Query().Get("auth_request"))})
}

// signUpPost serves POST /signup. The page afterwards is the same whether
// or not the address has an account: an existing account's owner gets a
// "you already have an account" message instead of a link.
func (h *Handler) signUpPost(w http.ResponseWriter, r *http.Request) {
	site := siteOf(r)
	if !site.SignUp {
		h.signUpClosed(w, r)
		return
	}
	d := signUpData{Request: validRequest(r.PostFormValue("auth_request")), Name: r.PostFormValue("name"), Email: r.PostFormValue("email")}
	name, email, err := platform.CheckSignUp(d.Name, d.Email)
	if err == nil {
		err = platform.CheckPassword(r.PostFormValue("password"))
	}
	if err != nil {
		d.Error = strings.TrimPrefix(err.Error(), platform.ErrInvalid.Error()+": ")
		d.Name, d.Email = echo(d.Name), echo(d.Email)
		h.render(w, r, http.StatusUnprocessableEntity, "accounts_signup", "Create an account", d)
		return
	}
	if !h.allowIP(w, r, "signup") {
		return
	}
	// Hashed whether or not the address has an account: the same work,
	// and the same refusals (the gate and the site's check budget, before
	// anything looks the address up). Before the mail limit, so that a
	// refusal to retry does not use up the address's messages.
	hash, err := h.platform.HashPassword(r.Context(), r.PostFormValue("password"), h.throttle.Hasher(site))
	if h.refused(w, r, err, func(status int, message string) {
		d.Error, d.Name, d.Email = message, echo(d.Name), echo(d.Email)
		h.render(w, r, status, "accounts_signup", "Create an account", d)
	}) {
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if err := h.platform.AllowMail(r.Context(), "signup", email); err != nil {
		if errors.Is(err, platform.ErrMailLimited) {
			h.tooMany(w, r, 0)
			return
		}
		h.fail(w, r, err)
		return
	}
	stored, err := h.store.SiteByID(r.Context(), site.ID)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	var b [32]byte
	_, _ = rand.Read(b[:])
	browser := base64.RawURLEncoding.EncodeToString(b[:])
	sum := sha256.Sum256([]byte(browser))
	http.SetCookie(w, &http.Cookie{Name: browserCookie(site), Value: browser, Path: "/", MaxAge: int(platform.SignUpLifetime.Seconds()),
		HttpOnly: true, Secure: site.Secure(), SameSite: http.SameSiteLaxMode})
	f := platform.SignUpForm{Name: name, Email: email, PasswordHash: hash, AuthRequest: d.Request, BrowserHash: sum[:],
		Lang: i18n.Resolve(r, site.Locale)}
	now := h.now()
	h.later(r, "sign-up", func(ctx context.Context) error { return h.platform.RequestSignUp(ctx, stored, f, now) })
	m := msg{
		Message: h.t(r, "accounts.signup.sent", "Email", email),
		Details: []string{"The link works once, for 24 hours. If you already have an account with this address, the message says so instead."},
	}
	if d.Request != "" {
		m.Details = append(m.Details, "Confirmed the address on another device? Sign in here to continue.")
		m.Links = []pageLink{{Label: "Sign in and continue", URL: "/login?auth_request=" + url.QueryEscape(d.Request), Primary: true}}
	}
	h.message(w, r, http.StatusOK, "Check your e-mail", m)
}

var signUpAgain = pageLink{Label: "Sign up again", URL: "/signup"}

// signUpVerify serves GET /signup/verify?token=: a button, so that a mail
// scanner that opens links does not use the link up.
func (h *Handler) signUpVerify(w http.ResponseWriter, r *http.Request) {
	tok := r.URL.Query().Get("token")
	if _, err := h.platform.SignUpLink(r.Context(), siteOf(r).ID, tok, h.now()); err != nil {
		if !h.linkProblem(w, r, err, signUpAgain) {
			h.fail(w, r, err)
		}
		return
	}
	h.render(w, r, http.StatusOK, "accounts_confirm", "Confirm your e-mail address", confirmData{
		Message: "Confirm your e-mail address to finish creating your account.", Action: "/signup/verify", Token: tok, Button: "Confirm and create my account"})
}

type confirmData struct{ Message, Action, Token, Button string }

// signUpVerifyPost serves POST /signup/verify: the account is created. The
// browser that signed up is signed in and continues the authorization it
// interrupted; another device only confirms.
func (h *Handler) signUpVerifyPost(w http.ResponseWriter, r *http.Request) {
	site := siteOf(r)
	u, t, err := h.platform.VerifySignUp(r.Context(), site.ID, r.PostFormValue("token"), h.now())
	switch {
	case errors.Is(err, storage.ErrConflict):
		h.message(w, r, http.StatusConflict, "You already have an account", msg{
			Message: "An account with this e-mail address exists already, so no new one was created.",
			Links:   []pageLink{{Label: "Sign in", URL: "/login", Primary: true}, {Label: "Forgot your password?", URL: "/password/forgot"}}})
		return
	case h.linkProblem(w, r, err, signUpAgain):
		return
	case err != nil:
		h.fail(w, r, err)
		return
	}
	h.audit(r, u.ID, "account.signed_up", "user:"+u.ID)
	sameBrowser := false
	if c, err := r.Cookie(browserCookie(site)); err == nil && len(t.BrowserHash) > 0 {
		sum := sha256.Sum256([]byte(c.Value))
		sameBrowser = bytes.Equal(sum[:], t.BrowserHash)
	}
	if sameBrowser {
		http.SetCookie(w, &http.Cookie{Name: browserCookie(site), Value: "", Path: "/", MaxAge: -1, HttpOnly: true, Secure: site.Secure(), SameSite: http.SameSiteLaxMode})
		target := ""
		if t.AuthRequest != "" {
			target = "/consent?auth_request=" + url.QueryEscape(t.AuthRequest)
		}
		h.signInAndGo(w, r, u, target)
		return
	}
	m := msg{Message: "Your e-mail address is confirmed and your account is ready.",
		Details: []string{"Go back to where you signed up and sign in there to continue, or sign in here."},
		Links:   []pageLink{{Label: "Sign in", URL: "/login", Primary: true}}}
	h.message(w, r, http.StatusOK, "Account created", m)
}
