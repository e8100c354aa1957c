package platform

import (
	"context"
	"errors"
	"time"

	lmail "github.com/lectern/lectern/mail"
	"github.com/lectern/lectern/storage"
)

// The changes NotifyFactorChange tells of.
const (
	FactorPasskeyAdded   = lmail.FactorPasskeyAdded
	FactorPasskeyRemoved = lmail.FactorPasskeyRemoved
	FactorAppAdded       = lmail.FactorAppAdded
	FactorAppReplaced    = lmail.FactorAppReplaced
	FactorAppRemoved     = lmail.FactorAppRemoved
	// Removals by the provider's support (NotifyFactorRemovedBySupport).
	FactorPasskeysRemovedBySupport = lmail.FactorPasskeysRemovedBySupport
	FactorAppRemovedBySupport      = lmail.FactorAppRemovedBySupport
)

// NotifyFactorChange mails u a notice that a second factor of the account
// changed at site: change is one of the Factor constants
// (FactorPasskeyAdded, ...), name the passkey's name (empty for the
// authenticator app), at when. Someone who got hold of the password, or a
// session, and adds a passkey or an app of their own keeps a way in that a
// password reset does not close; the notice tells the owner, who can reset
// the password (which ends every session) and have the factor removed by
// the provider's support, lectern user remove-factors (audit W, finding 1;
// audit V, finding 1). The notice goes to the account's address in its
// language, under the per-address mail limit of its kind: a notice the
// limit holds back is skipped (nil), as the change itself is made.
func (p *Platform) NotifyFactorChange(ctx context.Context, site *storage.Site, u *storage.User, change, name string, at time.Time) error {
	if err := p.allowMail(ctx, lmail.KindFactorNotice, u.Email); err != nil {
		if errors.Is(err, ErrMailLimited) {
			return nil
		}
		return err
	}
	return p.queueFactorNotice(ctx, site, u, change, name, at)
}

// NotifyFactorRemovedBySupport mails u that the provider's support removed
// second factors of the account (lectern user remove-factors): change is
// FactorPasskeysRemovedBySupport (site's passkeys, names their names) or
// FactorAppRemovedBySupport (the authenticator app; site is the site the
// mail comes from). Unlike NotifyFactorChange it is not held back by the
// per-address limit: only the operator's command sends it, and the owner
// must hear of every such removal, however many notices a thief's changes
// sent before.
func (p *Platform) NotifyFactorRemovedBySupport(ctx context.Context, site *storage.Site, u *storage.User, change, names string, at time.Time) error {
	return p.queueFactorNotice(ctx, site, u, change, names, at)
}

// queueFactorNotice composes the notice of change and queues it.
func (p *Platform) queueFactorNotice(ctx context.Context, site *storage.Site, u *storage.User, change, name string, at time.Time) error {
	m, err := p.compose(ctx, lmail.KindFactorNotice, site, u.Language, lmail.Data{
		To: u.Email, Name: u.Name, Factor: change, FactorName: name, At: at})
	if err != nil {
		return err
	}
	if err := p.Store.EnqueueMail(ctx, m); err != nil {
		return err
	}
	p.wake()
	return nil
}
