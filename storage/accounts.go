package storage

import (
	"context"
	"time"

	"github.com/lectern/lectern/tenant"
)

// Invitation asks a person, by e-mail, to join a site with a role. The
// mailed link carries a random token; only its SHA-256 is stored. It is
// pending until accepted, revoked or past ExpiresAt.
type Invitation struct {
	ID        int64 `gorm:"primaryKey;autoIncrement"`
	SiteID    tenant.ID
	Email     string
	Role      string
	TokenHash []byte
	// InvitedBy is the user ID of the operator who invited (or resent).
	InvitedBy  string
	CreatedAt  time.Time
	SentAt     time.Time
	ExpiresAt  time.Time
	AcceptedAt *time.Time
	AcceptedBy string
	RevokedAt  *time.Time
}

// Pending reports whether the invitation can still be accepted at now.
func (i *Invitation) Pending(now time.Time) bool {
	return i.AcceptedAt == nil && i.RevokedAt == nil && now.Before(i.ExpiresAt)
}

// Purposes of account tokens: what a mailed link does.
const (
	TokenPasswordReset = "password_reset"
	TokenSignUp        = "signup"
	TokenEmailChange   = "email_change"
)

// AccountToken is a single-use link mailed to a person: a password reset,
// the verification of a sign-up, or the confirmation of a new e-mail
// address. Only the SHA-256 of the token is stored.
type AccountToken struct {
	ID      int64 `gorm:"primaryKey;autoIncrement"`
	Purpose string
	// SiteID is the site whose origin the link points to.
	SiteID tenant.ID
	// UserID is the account (empty for a sign-up: its account is created
	// only when the address is verified).
	UserID string
	// Email is where the link was sent: the account's address, the
	// sign-up's, or the new address of an e-mail change.
	Email string
	// Name and PasswordHash are a sign-up's, kept until it is verified.
	Name         string
	PasswordHash string
	// AuthRequest is the authorization request a sign-up interrupted; the
	// browser that started it (BrowserHash: SHA-256 of a cookie) continues
	// it after verification.
	AuthRequest string
	BrowserHash []byte
	TokenHash   []byte
	CreatedAt   time.Time
	ExpiresAt   time.Time
	UsedAt      *time.Time
}

// OutboxMessage is one e-mail waiting to be sent, or sent. The request
// that causes a mail writes it here, in its own transaction; a sender loop
// delivers it (at least once), so no request waits for an SMTP server.
type OutboxMessage struct {
	ID int64 `gorm:"primaryKey;autoIncrement"`
	// SiteID is the site the mail is about (0: none).
	SiteID   tenant.ID
	Purpose  string
	ToAddr   string `gorm:"column:to_addr"`
	FromName string
	FromAddr string `gorm:"column:from_addr"`
	Subject  string
	TextBody string
	HTMLBody string `gorm:"column:html_body"`
	// Attempts counts claims; NextAttemptAt is when the next may be made.
	Attempts      int
	NextAttemptAt time.Time
	// LeaseOwner and LeaseUntil: a sender that claimed the message; others
	// leave it alone until the lease ends.
	LeaseOwner string
	LeaseUntil *time.Time
	LastError  string
	CreatedAt  time.Time
	SentAt     *time.Time
	// DeadAt is set when the message was given up after its last attempt.
	DeadAt *time.Time
}

// InvitationUpdate is a new token for a pending invitation (a resend, or
// a repeated invitation of the same address).
type InvitationUpdate struct {
	TokenHash []byte
	Role      string
	InvitedBy string
	SentAt    time.Time
	ExpiresAt time.Time
}

// AccountStore keeps invitations, account tokens and the mail outbox.
// Every change that sends mail takes the message along, so that the change
// and its mail are stored together or not at all.
type AccountStore interface {
	// CreateInvitation inserts inv; a pending invitation of the same
	// address at the site is ErrConflict.
	CreateInvitation(ctx context.Context, inv *Invitation, mail *OutboxMessage) error
	InvitationByID(ctx context.Context, site tenant.ID, id int64) (*Invitation, error)
	// PendingInvitationByEmail returns the site's invitation of email that
	// is neither accepted nor revoked (it may have expired).
	PendingInvitationByEmail(ctx context.Context, site tenant.ID, email string) (*Invitation, error)
	InvitationByTokenHash(ctx context.Context, site tenant.ID, hash []byte) (*Invitation, error)
	// ListInvitations returns the site's invitations that are neither
	// accepted nor revoked, oldest first, and how many there are.
	ListInvitations(ctx context.Context, site tenant.ID, p Page) ([]Invitation, int, error)
	// RenewInvitation gives a pending invitation a new token and expiry;
	// an accepted or revoked one is ErrNotFound.
	RenewInvitation(ctx context.Context, site tenant.ID, id int64, u InvitationUpdate, mail *OutboxMessage) (*Invitation, error)
	// RevokeInvitation revokes a pending invitation; an accepted or
	// revoked one is ErrNotFound.
	RevokeInvitation(ctx context.Context, site tenant.ID, id int64, at time.Time) error
	// AcceptInvitation marks the invitation accepted by userID (creating
	// newUser first when it is not nil), grants its role and marks the
	// account's address verified, in one transaction. An invitation that is
	// no longer pending at at is ErrNotFound; a newUser whose address is
	// taken is ErrConflict.
	AcceptInvitation(ctx context.Context, site tenant.ID, id int64, userID string, newUser *User, at time.Time) error

	// CreateAccountToken stores t and its mail.
	CreateAccountToken(ctx context.Context, t *AccountToken, mail *OutboxMessage) error
	// AccountTokenByHash returns the token of purpose with hash (used or
	// expired ones too: the caller tells them apart).
	AccountTokenByHash(ctx context.Context, purpose string, hash []byte) (*AccountToken, error)
	// ResetPassword uses the reset token id (unused and unexpired at at,
	// else ErrNotFound), sets the account's password hash, marks its
	// address verified and uses up its other reset tokens, together.
	ResetPassword(ctx context.Context, tokenID int64, userID, passwordHash string, at time.Time) error
	// CompleteSignUp uses the sign-up token id and creates its account,
	// verified, with role at the token's site. A used or expired token is
	// ErrNotFound; a taken address ErrConflict.
	CompleteSignUp(ctx context.Context, tokenID int64, u *User, role string, at time.Time) error
	// ChangeEmail uses the e-mail change token id and gives the account
	// its new, verified address. A taken address is ErrConflict.
	ChangeEmail(ctx context.Context, tokenID int64, userID, email string, at time.Time) error

	// EnqueueMail adds messages to the outbox.
	EnqueueMail(ctx context.Context, msgs ...*OutboxMessage) error
	// ClaimMail leases up to limit messages due at now to owner until
	// leaseUntil, counting an attempt on each; messages another sender
	// holds are skipped, never waited for.
	ClaimMail(ctx context.Context, owner string, now, leaseUntil time.Time, limit int) ([]OutboxMessage, error)
	// MailSent marks a message owner holds as sent and drops its bodies.
	MailSent(ctx context.Context, id int64, owner string, at time.Time) error
	// MailFailed records a failed attempt of a message owner holds: it is
	// tried again at next, or given up (dead) when next is zero.
	MailFailed(ctx context.Context, id int64, owner, reason string, next, at time.Time) error
	// PruneMail deletes messages sent before sentBefore and dead ones given
	// up before deadBefore; it returns how many.
	PruneMail(ctx context.Context, sentBefore, deadBefore time.Time) (int64, error)
	// MailCounts returns how many messages are waiting and how many are dead.
	MailCounts(ctx context.Context) (waiting, dead int64, err error)
	// UserGrants returns the live grants of the user at every site: what a
	// password reset revokes.
	UserGrants(ctx context.Context, userID string, at time.Time) ([]Grant, error)
}

// Keys of a site's account settings in Site.Settings.
const (
	settingSignUp          = "signup_enabled"
	settingMailFromName    = "mail_from_name"
	settingMailFromAddress = "mail_from_address"
	settingStaffMFA        = "staff_mfa"
)

// AccountSettings are a site's account options: whether people may sign
// up on their own (off by default), and the sender of its mail (empty: the
// site's name and the platform's address).
type AccountSettings struct {
	SignUp          bool
	MailFromName    string
	MailFromAddress string
	// StaffMFA: owners, admins and lecturers must use a second factor in
	// the admin area and to authorize an operator client (off by default).
	StaffMFA bool
}

// Accounts returns the site's account settings.
func (s *Site) Accounts() AccountSettings {
	var a AccountSettings
	a.SignUp, _ = s.Settings[settingSignUp].(bool)
	a.MailFromName, _ = s.Settings[settingMailFromName].(string)
	a.MailFromAddress, _ = s.Settings[settingMailFromAddress].(string)
	a.StaffMFA, _ = s.Settings[settingStaffMFA].(bool)
	return a
}

// SetAccounts stores a in the site's settings (empty values are removed).
func (s *Site) SetAccounts(a AccountSettings) {
	if s.Settings == nil {
		s.Settings = map[string]any{}
	}
	set := func(k string, v any, keep bool) {
		if keep {
			s.Settings[k] = v
		} else {
			delete(s.Settings, k)
		}
	}
	set(settingSignUp, a.SignUp, a.SignUp)
	set(settingStaffMFA, a.StaffMFA, a.StaffMFA)
	set(settingMailFromName, a.MailFromName, a.MailFromName != "")
	set(settingMailFromAddress, a.MailFromAddress, a.MailFromAddress != "")
}
