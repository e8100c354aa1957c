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
)

// NotifyFactorChange mails u a notice that a second factor of the account
// changed at site: change is one of the Factor constants
// (FactorPasskeyAdded, ...), name the passkey's name (empty for the
// authenticator app), at when. Someone who got hold of the password, or a
// session, and adds a passkey or an app of their own keeps a way in that a
// password reset does not close; the notice tells the owner, who can act
// (audit W, finding 1). The notice goes to the account's address in its
// language, under the per-address mail limit of its kind: a notice the
// limit holds back is skipped (nil), as the change itself is made.
func (p *Platform) NotifyFactorChange(ctx context.Context, site *storage.Site, u *storage.User, change, name string, at time.Time) error {
	if err := p.allowMail(ctx, lmail.KindFactorNotice, u.Email); err != nil {
		if errors.Is(err, ErrMailLimited) {
			return nil
		}
		return err
	}
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
