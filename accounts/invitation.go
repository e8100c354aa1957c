package accounts

import (
	"errors"
	"net/http"
	"strings"

	"github.com/lectern/lectern/authserver/throttle"
	"github.com/lectern/lectern/i18n"
	"github.com/lectern/lectern/internal/platform"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

type invitationData struct {
	Token, Email, InvitedBy string
	// Role is the role the invitation gives (owner, admin, lecturer,
	// student); the page words it in its language.
	Role string
	// Action is create (no account has the address), signin (one has) or
	// accept (its owner is signed in).
	Action string
	Name   string
	Error  string
}

var inviteAgain = pageLink{Label: "Go to sign-in", URL: "/login"}

// invitation serves GET /invitations/accept?token=: the form that fits the
// invited address (a new account, a sign-in, or one button).
func (h *Handler) invitation(w http.ResponseWriter, r *http.Request) {
	d, inv, err := h.invitationState(r, r.URL.Query().Get("token"))
	if h.linkProblem(w, r, err, inviteAgain) {
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	_ = inv
	h.render(w, r, http.StatusOK, "accounts_invitation", "Accept your invitation", d)
}

// invitationState reads the invitation of tok and who may accept it.
func (h *Handler) invitationState(r *http.Request, tok string) (*invitationData, *storage.Invitation, error) {
	site := siteOf(r)
	inv, err := h.platform.InvitationByLink(r.Context(), site.ID, tok, h.now())
	if err != nil {
		return nil, nil, err
	}
	d := &invitationData{Token: tok, Email: inv.Email, Role: inv.Role, Action: "create"}
	if by, err := h.store.UserByID(r.Context(), inv.InvitedBy); err == nil {
		d.InvitedBy = by.Name
	}
	switch _, err := h.store.UserByEmail(r.Context(), inv.Email); {
	case err == nil:
		d.Action = "signin"
		if sess, serr := h.sessions.Get(r, site); serr == nil && sess != nil {
			if u, uerr := h.store.UserByID(r.Context(), sess.UserID); uerr == nil && strings.EqualFold(u.Email, inv.Email) {
				d.Action = "accept"
			}
		}
	case !errors.Is(err, storage.ErrNotFound):
		return nil, nil, err
	}
	return d, inv, nil
}

// invitationPost serves POST /invitations/accept.
func (h *Handler) invitationPost(w http.ResponseWriter, r *http.Request) {
	site := siteOf(r)
	ctx := r.Context()
	tok := r.PostFormValue("token")
	d, inv, err := h.invitationState(r, tok)
	if h.linkProblem(w, r, err, inviteAgain) {
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if !h.allowIP(w, r, "invitation") {
		return
	}
	again := func(status int, message string) {
		d.Error, d.Name = message, echo(d.Name)
		h.render(w, r, status, "accounts_invitation", "Accept your invitation", d)
	}
	now := h.now()
	switch d.Action {
	case "create":
		d.Name = strings.TrimSpace(r.PostFormValue("name"))
		u, err := h.platform.AcceptInvitationNew(ctx, site.ID, tok, d.Name, r.PostFormValue("password"), h.throttle.Hasher(site), now)
		switch {
		case h.refused(w, r, err, again):
			return
		case errors.Is(err, platform.ErrInvalid):
			again(http.StatusUnprocessableEntity, strings.TrimPrefix(err.Error(), platform.ErrInvalid.Error()+": "))
			return
		case errors.Is(err, storage.ErrConflict):
			// An account with the address appeared meanwhile: sign in.
			d.Action = "signin"
			again(http.StatusConflict, "An account with this address exists now. Sign in with its password to accept.")
			return
		case h.linkProblem(w, r, err, inviteAgain):
			return
		case err != nil:
			h.fail(w, r, err)
			return
		}
		h.audit(r, u.ID, "invitation.accepted", "user:"+u.ID)
		h.signInAndGo(w, r, u, "")
	case "signin", "accept":
		u, err := h.store.UserByEmail(ctx, inv.Email)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		signedIn := d.Action == "accept" && r.PostFormValue("action") == "accept"
		if !signedIn {
			// Checked as a sign-in is (authserver/throttle): counted with
			// the sign-in form's failures, under the same gate.
			refusal, _, err := h.throttle.Verify(ctx, site, u.Email, tenant.ClientIP(r), r.PostFormValue("password"), u.PasswordHash)
			switch {
			case refusal != nil:
				w.Header().Set("Retry-After", refusal.RetryAfter())
				d.Action = "signin"
				again(refusal.Status, refusal.Message(i18n.Resolve(r, site.Locale)))
				return
			case errors.Is(err, throttle.ErrMismatch):
				h.audit(r, inv.Email, "login.failed", inv.Email)
				d.Action = "signin"
				again(http.StatusUnauthorized, "The password is wrong.")
				return
			case err != nil:
				h.fail(w, r, err)
				return
			}
		}
		err = h.platform.AcceptInvitationAs(ctx, site.ID, tok, u, now)
		if h.linkProblem(w, r, err, inviteAgain) {
			return
		}
		if err != nil {
			h.fail(w, r, err)
			return
		}
		h.audit(r, u.ID, "invitation.accepted", "user:"+u.ID)
		h.signInAndGo(w, r, u, "")
	}
}
