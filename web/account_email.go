package web

import (
	"errors"
	"net/http"
	"strings"

	"github.com/lectern/lectern/authserver/throttle"
	"github.com/lectern/lectern/internal/platform"
	"github.com/lectern/lectern/tenant"
)

type emailData struct {
	chrome
	Email    string
	Verified bool
	NewEmail string
	Error    string
}

// emailPage serves GET /account/email: the account's address and the form
// to change it.
func (h *Handler) emailPage(w http.ResponseWriter, r *http.Request, rq *request) {
	h.renderEmail(w, r, rq, http.StatusOK, emailData{}, h.takeFlash(r.Context(), rq))
}

func (h *Handler) renderEmail(w http.ResponseWriter, r *http.Request, rq *request, status int, d emailData, f *flash) {
	d.chrome = chromeFor(rq, "account", "email")
	d.Email, d.Verified = rq.user.Email, rq.user.EmailVerified
	h.render(w, r, rq, status, "account_email", "E-mail address", d, f)
}

// emailChange serves POST /account/email: with the current password, a
// link goes to the new address (and a notice to the old one); the address
// changes only when the link is opened.
func (h *Handler) emailChange(w http.ResponseWriter, r *http.Request, rq *request) {
	d := emailData{NewEmail: strings.TrimSpace(r.PostFormValue("new_email"))}
	// The current password is checked as a sign-in is (authserver/throttle):
	// a stolen session must not make this form an unthrottled guesser.
	refusal, a, err := h.throttle.Verify(r.Context(), rq.site, rq.user.Email, tenant.ClientIP(r), r.PostFormValue("password"), rq.user.PasswordHash)
	switch {
	case refusal != nil:
		w.Header().Set("Retry-After", refusal.RetryAfter())
		d.Error = refusal.Message(lang(r, rq))
		if refusal.Reason != "busy" && h.throttle.FirstRefusal(r.Context(), a, refusal.Reason) {
			h.audit(r, rq, "login.throttled", rq.user.Email, map[string]any{"reason": refusal.Reason, "during": "email_change"})
		}
		h.renderEmail(w, r, rq, refusal.Status, d, nil)
		return
	case errors.Is(err, throttle.ErrMismatch):
		d.Error = "Your current password is wrong."
		h.audit(r, rq, "login.failed", rq.user.Email, map[string]any{"during": "email_change"})
		h.renderEmail(w, r, rq, http.StatusUnauthorized, d, nil)
		return
	case err != nil:
		h.fail(w, r, rq, err)
		return
	}
	site, err := h.store.SiteByID(r.Context(), rq.site.ID)
	if err != nil {
		h.fail(w, r, rq, err)
		return
	}
	err = h.platform.RequestEmailChange(r.Context(), site, rq.user, d.NewEmail, h.now())
	switch {
	case errors.Is(err, platform.ErrInvalid):
		d.Error = strings.TrimPrefix(err.Error(), platform.ErrInvalid.Error()+": ")
		h.renderEmail(w, r, rq, http.StatusUnprocessableEntity, d, nil)
		return
	case errors.Is(err, platform.ErrMailLimited):
		d.Error = "This address got several messages in the last hour. Try again later."
		h.renderEmail(w, r, rq, http.StatusTooManyRequests, d, nil)
		return
	case err != nil:
		h.fail(w, r, rq, err)
		return
	}
	h.audit(r, rq, "account.email_change_requested", "user:"+rq.user.ID, nil)
	_ = h.setFlash(r.Context(), rq, flash{Kind: "ok", Message: h.t(r, rq, "web.email.sent", "New", strings.ToLower(d.NewEmail), "Current", rq.user.Email)})
	seeOther(w, r, "/account/email")
}
