package platform

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/lectern/lectern/authserver/password"
	lmail "github.com/lectern/lectern/mail"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// AllowMail applies the per-address mail limit for purpose (a mail kind),
// before a form answers: the answer must not depend on whether the address
// has an account, and the limit applies to every address alike.
func (p *Platform) AllowMail(ctx context.Context, purpose, email string) error {
	return p.allowMail(ctx, purpose, email)
}

// Hasher hashes a new password under params. The forms a stranger can
// send pass one that shares the sign-in checks' bounds (the password
// gate and the site's check budget: authserver/throttle's Hash), whose
// refusals come back as its errors; nil hashes at once (the CLI, the
// demo seed).
type Hasher func(ctx context.Context, pw string, params password.Params) (string, error)

// HashPassword checks and hashes a new password with hash (nil: at once).
// Forms that must take as long whether or not an account exists call it
// in either case.
func (p *Platform) HashPassword(ctx context.Context, pw string, hash Hasher) (string, error) {
	if err := CheckPassword(pw); err != nil {
		return "", err
	}
	if hash == nil {
		return password.Hash(pw, p.PasswordParams)
	}
	return hash(ctx, pw, p.PasswordParams)
}

// RequestPasswordReset mails a reset link to the account with email, if
// there is one; otherwise it does nothing. Callers answer the same either
// way, and run it after answering (it is the part whose duration differs).
func (p *Platform) RequestPasswordReset(ctx context.Context, site *storage.Site, email string, now time.Time) error {
	u, err := p.Store.UserByEmail(ctx, email)
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	tok, hash := NewLinkToken()
	m, err := p.compose(ctx, lmail.KindPasswordReset, site, u.Language, lmail.Data{
		To: u.Email, Name: u.Name, Link: link(site, "/password/reset", tok), ValidMinutes: int(ResetLifetime / time.Minute)})
	if err != nil {
		return err
	}
	t := &storage.AccountToken{Purpose: storage.TokenPasswordReset, SiteID: site.ID, UserID: u.ID, Email: u.Email,
		TokenHash: hash, CreatedAt: now, ExpiresAt: now.Add(ResetLifetime)}
	if err := p.Store.CreateAccountToken(ctx, t, m); err != nil {
		return err
	}
	p.wake()
	return nil
}

// ResetLink checks a password-reset link at site (ErrLinkInvalid,
// ErrLinkExpired).
func (p *Platform) ResetLink(ctx context.Context, site tenant.ID, tok string, now time.Time) (*storage.AccountToken, error) {
	return p.linkToken(ctx, site, storage.TokenPasswordReset, tok, now)
}

// SessionEnder ends every browser session of a person (session.Store).
type SessionEnder interface {
	EndAll(ctx context.Context, userID string) error
}

// ResetPassword sets a new password through a reset link. The link is used
// up, with every other reset link and every pending e-mail change of the
// account; the address counts as
// verified (the link reached it); every browser session of the account
// ends and every grant at every site is revoked, so that whoever knew the
// old password is shut out at once. The new password is hashed with
// hasher (HashPassword).
func (p *Platform) ResetPassword(ctx context.Context, site tenant.ID, tok, newPassword string, hasher Hasher, sessions SessionEnder, rev Revoker, now time.Time) (*storage.User, error) {
	t, err := p.ResetLink(ctx, site, tok, now)
	if err != nil {
		return nil, err
	}
	hash, err := p.HashPassword(ctx, newPassword, hasher)
	if err != nil {
		return nil, err
	}
	if err := p.Store.ResetPassword(ctx, t.ID, t.UserID, hash, now); err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return nil, ErrLinkExpired
		}
		return nil, err
	}
	var errs []error
	if err := sessions.EndAll(ctx, t.UserID); err != nil {
		errs = append(errs, fmt.Errorf("ending sessions: %w", err))
	}
	grants, err := p.Store.UserGrants(ctx, t.UserID, now)
	if err != nil {
		errs = append(errs, fmt.Errorf("listing grants: %w", err))
	}
	for _, g := range grants {
		if err := rev.RevokeGrant(ctx, g.SiteID, g.ID, now); err != nil && !errors.Is(err, storage.ErrNotFound) {
			errs = append(errs, fmt.Errorf("revoking grant %s: %w", g.ID, err))
		}
	}
	p.forgetUser(ctx, t.UserID)
	u, err := p.Store.UserByID(ctx, t.UserID)
	if err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 && p.Logger != nil {
		p.Logger.ErrorContext(ctx, "password reset: the password changed, but not everything of the old one was ended", "user", t.UserID, "err", errors.Join(errs...))
	}
	return u, errors.Join(errs...)
}

// SignUpForm is a sign-up as the form sent it, its password hashed.
type SignUpForm struct {
	Name, Email, PasswordHash string
	// AuthRequest is the authorization request the sign-up interrupted;
	// BrowserHash the SHA-256 of the cookie of the browser that signed up.
	AuthRequest string
	BrowserHash []byte
	// Lang is the language of the page the person signed up on: their
	// mail is in it.
	Lang string
}

// firstOf is the first of langs that is set.
func firstOf(langs ...string) string {
	for _, l := range langs {
		if l != "" {
			return l
		}
	}
	return ""
}

// CheckSignUp validates a sign-up's name and address.
func CheckSignUp(name, email string) (string, string, error) {
	name = strings.TrimSpace(name)
	if name == "" || !isText(name) || utf8.RuneCountInString(name) > maxName {
		return "", "", fmt.Errorf("%w: enter your name (at most %d characters)", ErrInvalid, maxName)
	}
	email, err := NormalizeEmail(email)
	return name, email, err
}

// RequestSignUp mails the address a verification link, or, when it has an
// account already, a "you already have an account" message. Callers answer
// the same either way and run it after answering.
func (p *Platform) RequestSignUp(ctx context.Context, site *storage.Site, f SignUpForm, now time.Time) error {
	u, err := p.Store.UserByEmail(ctx, f.Email)
	switch {
	case err == nil:
		m, err := p.compose(ctx, lmail.KindSignUpExists, site, firstOf(u.Language, f.Lang), lmail.Data{To: u.Email, Name: u.Name})
		if err != nil {
			return err
		}
		if err := p.Store.EnqueueMail(ctx, m); err != nil {
			return err
		}
		p.wake()
		return nil
	case !errors.Is(err, storage.ErrNotFound):
		return err
	}
	tok, hash := NewLinkToken()
	m, err := p.compose(ctx, lmail.KindSignUpVerify, site, f.Lang, lmail.Data{
		To: f.Email, Name: f.Name, Link: link(site, "/signup/verify", tok), ValidHours: int(SignUpLifetime / time.Hour)})
	if err != nil {
		return err
	}
	t := &storage.AccountToken{Purpose: storage.TokenSignUp, SiteID: site.ID, Email: f.Email, Name: f.Name,
		PasswordHash: f.PasswordHash, AuthRequest: f.AuthRequest, BrowserHash: f.BrowserHash,
		TokenHash: hash, CreatedAt: now, ExpiresAt: now.Add(SignUpLifetime)}
	if err := p.Store.CreateAccountToken(ctx, t, m); err != nil {
		return err
	}
	p.wake()
	return nil
}

// VerifySignUp completes a sign-up through its link: the account is
// created, verified, as a student of the site. An address that got an
// account meanwhile is storage.ErrConflict.
func (p *Platform) VerifySignUp(ctx context.Context, site tenant.ID, tok string, now time.Time) (*storage.User, *storage.AccountToken, error) {
	t, err := p.linkToken(ctx, site, storage.TokenSignUp, tok, now)
	if err != nil {
		return nil, t, err
	}
	u := &storage.User{ID: NewUserID(), Name: t.Name, PasswordHash: t.PasswordHash}
	if err := p.Store.CompleteSignUp(ctx, t.ID, u, storage.RoleStudent, now); err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return nil, t, ErrLinkExpired
		}
		return nil, t, err
	}
	p.forgetRoles(ctx, site, u.ID)
	return u, t, nil
}

// RequestEmailChange starts moving u to newEmail: the new address gets a
// link that makes the change, the old one a notice. The caller has checked
// the current password. An address that has an account gets no link (the
// change could never be confirmed), but the answer is the same, so that
// the form does not tell whether someone has an account.
func (p *Platform) RequestEmailChange(ctx context.Context, site *storage.Site, u *storage.User, newEmail string, now time.Time) error {
	newEmail, err := NormalizeEmail(newEmail)
	if err != nil {
		return err
	}
	if strings.EqualFold(newEmail, u.Email) {
		return fmt.Errorf("%w: that is your current address", ErrInvalid)
	}
	if err := p.allowMail(ctx, lmail.KindEmailChangeVerify, newEmail); err != nil {
		return err
	}
	notice, err := p.compose(ctx, lmail.KindEmailChangeNotice, site, u.Language, lmail.Data{To: u.Email, Name: u.Name, NewEmail: newEmail})
	if err != nil {
		return err
	}
	_, err = p.Store.UserByEmail(ctx, newEmail)
	switch {
	case err == nil:
		if err := p.Store.EnqueueMail(ctx, notice); err != nil {
			return err
		}
		p.wake()
		return nil
	case !errors.Is(err, storage.ErrNotFound):
		return err
	}
	tok, hash := NewLinkToken()
	m, err := p.compose(ctx, lmail.KindEmailChangeVerify, site, u.Language, lmail.Data{
		To: newEmail, Name: u.Name, NewEmail: newEmail, Link: link(site, "/email/confirm", tok), ValidHours: int(EmailChangeLifetime / time.Hour)})
	if err != nil {
		return err
	}
	t := &storage.AccountToken{Purpose: storage.TokenEmailChange, SiteID: site.ID, UserID: u.ID, Email: newEmail,
		TokenHash: hash, CreatedAt: now, ExpiresAt: now.Add(EmailChangeLifetime)}
	if err := p.Store.CreateAccountToken(ctx, t, m); err != nil {
		return err
	}
	if err := p.Store.EnqueueMail(ctx, notice); err != nil {
		return err
	}
	p.wake()
	return nil
}

// ConfirmEmailChange makes the change a link stands for. An address that
// got an account meanwhile is storage.ErrConflict.
func (p *Platform) ConfirmEmailChange(ctx context.Context, site tenant.ID, tok string, now time.Time) (*storage.User, error) {
	t, err := p.linkToken(ctx, site, storage.TokenEmailChange, tok, now)
	if err != nil {
		return nil, err
	}
	if err := p.Store.ChangeEmail(ctx, t.ID, t.UserID, t.Email, now); err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return nil, ErrLinkExpired
		}
		return nil, err
	}
	p.forgetUser(ctx, t.UserID)
	return p.Store.UserByID(ctx, t.UserID)
}

// SignUpLink checks a sign-up verification link at site.
func (p *Platform) SignUpLink(ctx context.Context, site tenant.ID, tok string, now time.Time) (*storage.AccountToken, error) {
	return p.linkToken(ctx, site, storage.TokenSignUp, tok, now)
}

// EmailChangeLink checks an e-mail change link at site.
func (p *Platform) EmailChangeLink(ctx context.Context, site tenant.ID, tok string, now time.Time) (*storage.AccountToken, error) {
	return p.linkToken(ctx, site, storage.TokenEmailChange, tok, now)
}
