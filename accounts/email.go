package accounts

import (
	"errors"
	"net/http"

	"github.com/lectern/lectern/storage"
)

var emailAgain = pageLink{Label: "Your account", URL: "/account/email"}

// emailConfirm serves GET /email/confirm?token=: a button (mail scanners
// open links).
func (h *Handler) emailConfirm(w http.ResponseWriter, r *http.Request) {
	tok := r.URL.Query().Get("token")
	t, err := h.platform.EmailChangeLink(r.Context(), siteOf(r).ID, tok, h.now())
	if err != nil {
		if !h.linkProblem(w, r, err, emailAgain) {
			h.fail(w, r, err)
		}
		return
	}
	h.render(w, r, http.StatusOK, "accounts_confirm", "Confirm your new e-mail address", confirmData{
		Message: h.t(r, "accounts.email.use", "Email", t.Email), Action: "/email/confirm", Token: tok, Button: h.t(r, "accounts.email.confirm", "Email", t.Email)})
}

// emailConfirmPost serves POST /email/confirm: the address changes.
func (h *Handler) emailConfirmPost(w http.ResponseWriter, r *http.Request) {
	u, err := h.platform.ConfirmEmailChange(r.Context(), siteOf(r).ID, r.PostFormValue("token"), h.now())
	switch {
	case errors.Is(err, storage.ErrConflict):
		h.message(w, r, http.StatusConflict, "Address not changed", msg{Alert: true,
			Message: "This address belongs to another account now, so it cannot become yours. Nothing was changed.",
			Links:   []pageLink{emailAgain}})
		return
	case h.linkProblem(w, r, err, emailAgain):
		return
	case err != nil:
		h.fail(w, r, err)
		return
	}
	h.audit(r, u.ID, "account.email_changed", "user:"+u.ID)
	h.message(w, r, http.StatusOK, "E-mail address changed", msg{
		Message: h.t(r, "accounts.email.changed", "Email", u.Email),
		Details: []string{"Use it to sign in from now on."},
		Links:   []pageLink{{Label: "Your account", URL: "/account/email", Primary: true}}})
}
