package web

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/lectern/lectern/authserver/throttle"
	"github.com/lectern/lectern/mfa"
	"github.com/lectern/lectern/tenant"
)

// Changing an account's second factors takes more than the session cookie
// (audit W, finding 1; audit P, findings 2 and 3). A stolen cookie, a
// browser left signed in, or a phished password must not let someone add
// a factor of their own (which a password reset does not take away: a
// passkey keeps signing in, an app keeps the owner out), nor replace or
// remove the owner's.
//
//   - Adding a factor (a passkey; the authenticator app, which replaces
//     any app and its recovery codes) takes the current password typed
//     again on the form, checked as a sign-in is (authserver/throttle: the
//     form is no unthrottled guesser, failures count with the sign-in
//     form's), as the e-mail change does. An account without a password
//     (none can be made today: every way to make an account sets one)
//     would need a sign-in within the last freshSignIn instead.
//   - When the account already has a second factor anywhere (the app, or
//     a passkey at any site), the session must have proved one (amr mfa)
//     too. Passkeys work only at their own site, so at any other site the
//     password alone makes a session: without this rule, that session
//     could set up an app, which works at every site.
//   - Removing a passkey takes a session that proved a factor. The passkey
//     is one at this site, so its owner can always prove one here.
//     Turning the app off takes a current code or a recovery code.
//
// Every factor added or removed is mailed to the account (NotifyFactorChange).

// freshSignIn is how recent a sign-in adds a factor to an account without
// a password.
const freshSignIn = 5 * time.Minute

// factorRefusal is why a change of second factors was refused.
type factorRefusal struct {
	Status int
	// Message is a sentence of the catalogs' text section, or one in the
	// page's language already (a throttle's refusal).
	Message    string
	RetryAfter string
	// SignIn: signing in again here proves a factor (the page links to it).
	SignIn bool
}

// signInAgainURL signs in again (with the second factor) and comes back to
// the security page.
var signInAgainURL = "/login?return_to=" + url.QueryEscape(securityPath)

// factorProved checks the second rule: an account with a second factor
// anywhere changes its factors only from a session that proved one. Nil:
// the rule holds.
func (h *Handler) factorProved(ctx context.Context, rq *request) (*factorRefusal, error) {
	if rq.sess.MFA() {
		return nil, nil
	}
	has, err := mfa.HasAnyFactor(ctx, h.store, rq.user.ID)
	if err != nil || !has {
		return nil, err
	}
	totpOn, keys, err := mfa.HasFactor(ctx, h.store, rq.site.ID, rq.user.ID)
	if err != nil {
		return nil, err
	}
	if totpOn || (keys > 0 && mfa.Available(rq.site)) {
		return &factorRefusal{Status: http.StatusForbidden, SignIn: true,
			Message: "To change your second factors, first sign in again with your second factor."}, nil
	}
	return &factorRefusal{Status: http.StatusForbidden,
		Message: "Your account has a passkey at another site, which cannot be checked here. Sign in there with it and set up an authenticator app, then sign in here with the app to change your second factors."}, nil
}

// mayAddFactor checks what adding a second factor takes (both rules);
// during names the form in audit events. Nil: it may.
func (h *Handler) mayAddFactor(r *http.Request, rq *request, during string) (*factorRefusal, error) {
	ctx := r.Context()
	if f, err := h.factorProved(ctx, rq); f != nil || err != nil {
		return f, err
	}
	if rq.user.PasswordHash == "" {
		if h.now().Sub(rq.sess.AuthTime) > freshSignIn {
			return &factorRefusal{Status: http.StatusForbidden, SignIn: true, Message: "To add a second factor, sign in again first."}, nil
		}
		return nil, nil
	}
	pw := r.PostFormValue("password")
	if pw == "" {
		return &factorRefusal{Status: http.StatusUnprocessableEntity, Message: "Enter your current password."}, nil
	}
	refusal, a, err := h.throttle.Verify(ctx, rq.site, rq.user.Email, tenant.ClientIP(r), pw, rq.user.PasswordHash)
	switch {
	case refusal != nil:
		if refusal.Reason != "busy" && h.throttle.FirstRefusal(ctx, a, refusal.Reason) {
			h.audit(r, rq, "login.throttled", rq.user.Email, map[string]any{"reason": refusal.Reason, "during": during})
		}
		return &factorRefusal{Status: refusal.Status, Message: refusal.Message(lang(r, rq)), RetryAfter: refusal.RetryAfter()}, nil
	case errors.Is(err, throttle.ErrMismatch):
		h.audit(r, rq, "login.failed", rq.user.Email, map[string]any{"during": during})
		return &factorRefusal{Status: http.StatusUnauthorized, Message: "Your current password is wrong."}, nil
	case err != nil:
		return nil, err
	}
	return nil, nil
}

// notifyFactor mails the account that change (a platform.Factor constant) was
// made to its factors here; name is the passkey's. The change is made
// whatever happens to the notice: a failure is logged.
func (h *Handler) notifyFactor(r *http.Request, rq *request, change, name string) {
	ctx := r.Context()
	site, err := h.store.SiteByID(ctx, rq.site.ID)
	if err == nil {
		err = h.platform.NotifyFactorChange(ctx, site, rq.user, change, name, h.now())
	}
	if err != nil {
		h.logger.WarnContext(ctx, "factor change notice not sent", "change", change, "err", err)
	}
}
