package accounts

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/lectern/lectern/internal/platform"
	lmail "github.com/lectern/lectern/mail"
)

type forgotData struct{ Email, Error string }

type resetData struct{ Token, Email, Error string }

var forgotAgain = pageLink{Label: "Ask for a new link", URL: "/password/forgot", Primary: true}

// forgot serves GET /password/forgot.
func (h *Handler) forgot(w http.ResponseWriter, r *http.Request) {
	h.render(w, r, http.StatusOK, "accounts_forgot", "Forgot your password?", forgotData{})
}

// forgotPost serves POST /password/forgot. Whether or not the address has
// an account, the request does the same work and gets the same page; the
// lookup and the mail happen afterwards.
func (h *Handler) forgotPost(w http.ResponseWriter, r *http.Request) {
	email, err := platform.NormalizeEmail(r.PostFormValue("email"))
	if err != nil {
		h.render(w, r, http.StatusBadRequest, "accounts_forgot", "Forgot your password?",
			forgotData{Email: echo(r.PostFormValue("email")), Error: "Enter the e-mail address of your account."})
		return
	}
	if !h.allowIP(w, r, "forgot") {
		return
	}
	if err := h.platform.AllowMail(r.Context(), lmail.KindPasswordReset, email); err != nil {
		if errors.Is(err, platform.ErrMailLimited) {
			h.tooMany(w, r, 0)
			return
		}
		h.fail(w, r, err)
		return
	}
	stored, err := h.store.SiteByID(r.Context(), siteOf(r).ID)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	now := h.now()
	h.later(r, "password reset", func(ctx context.Context) error {
		return h.platform.RequestPasswordReset(ctx, stored, email, now)
	})
	h.message(w, r, http.StatusOK, "Check your e-mail", msg{
		Message: h.t(r, "accounts.forgot.sent", "Email", email),
		Details: []string{"The link works once, for 30 minutes. No message after a few minutes? Check your spam folder, or try again."},
		Links:   []pageLink{{Label: "Back to sign-in", URL: "/login"}},
	})
}

// reset serves GET /password/reset?token=.
func (h *Handler) reset(w http.ResponseWriter, r *http.Request) {
	tok := r.URL.Query().Get("token")
	t, err := h.platform.ResetLink(r.Context(), siteOf(r).ID, tok, h.now())
	if h.linkProblem(w, r, err, forgotAgain) {
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.render(w, r, http.StatusOK, "accounts_reset", "Choose a new password", resetData{Token: tok, Email: t.Email})
}

// resetPost serves POST /password/reset.
func (h *Handler) resetPost(w http.ResponseWriter, r *http.Request) {
	site := siteOf(r)
	tok := r.PostFormValue("token")
	t, err := h.platform.ResetLink(r.Context(), site.ID, tok, h.now())
	if h.linkProblem(w, r, err, forgotAgain) {
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	d := resetData{Token: tok, Email: t.Email}
	pw := r.PostFormValue("password")
	if pw != r.PostFormValue("password2") {
		d.Error = "The two passwords are not the same."
		h.render(w, r, http.StatusUnprocessableEntity, "accounts_reset", "Choose a new password", d)
		return
	}
	if err := platform.CheckPassword(pw); err != nil {
		d.Error = strings.TrimPrefix(err.Error(), platform.ErrInvalid.Error()+": ")
		h.render(w, r, http.StatusUnprocessableEntity, "accounts_reset", "Choose a new password", d)
		return
	}
	u, err := h.platform.ResetPassword(r.Context(), site.ID, tok, pw, h.throttle.Hasher(site), h.sessions, h.revoker, h.now())
	if h.linkProblem(w, r, err, forgotAgain) {
		return
	}
	if h.refused(w, r, err, func(status int, message string) {
		d.Error = message
		h.render(w, r, status, "accounts_reset", "Choose a new password", d)
	}) {
		return
	}
	if u == nil && err != nil {
		h.fail(w, r, err)
		return
	}
	// The password changed even if ending everything else partly failed
	// (logged by the platform); the person is told what happened.
	h.audit(r, u.ID, "password.reset", "user:"+u.ID)
	_ = h.sessions.Destroy(w, r, site)
	h.message(w, r, http.StatusOK, "Password changed", msg{
		Message: "Your password was changed.",
		Details: []string{"You were signed out everywhere, and the apps connected to your account were disconnected. Sign in with your new password."},
		Links:   []pageLink{{Label: "Sign in", URL: "/login", Primary: true}},
	})
}
