package storage

import (
	"context"
	"time"

	"github.com/lectern/lectern/tenant"
)

// Passkey is a WebAuthn credential registered at one site (its relying
// party is the site's host). Data is the verified credential as JSON, as
// the WebAuthn library keeps it; the store does not read it.
type Passkey struct {
	ID           int64 `gorm:"primaryKey;autoIncrement"`
	SiteID       tenant.ID
	UserID       string
	CredentialID []byte
	Name         string
	Data         string
	CreatedAt    time.Time
	LastUsedAt   *time.Time
}

// TOTP is an account's authenticator app: its shared secret (base32) and
// the last time step a code was accepted for.
type TOTP struct {
	UserID    string `gorm:"primaryKey"`
	Secret    string
	LastStep  int64
	CreatedAt time.Time
}

// TableName names the table after what it holds.
func (TOTP) TableName() string { return "totp_authenticators" }

// RecoveryCode is the SHA-256 of a one-time code that stands in for the
// account's second factor.
type RecoveryCode struct {
	ID       int64 `gorm:"primaryKey;autoIncrement"`
	UserID   string
	CodeHash []byte
	UsedAt   *time.Time
}

// FactorStore keeps the second factors of accounts. Passkeys belong to a
// site: every passkey method takes the site, and a passkey of another site
// is ErrNotFound. TOTP and recovery codes belong to the account.
type FactorStore interface {
	// CreatePasskey stores a new passkey (ErrConflict: the credential is
	// registered at the site already).
	CreatePasskey(ctx context.Context, p *Passkey) error
	// Passkeys returns the user's passkeys at site, oldest first.
	Passkeys(ctx context.Context, site tenant.ID, userID string) ([]Passkey, error)
	// CountPasskeys counts the user's passkeys at every site: the one
	// passkey question not scoped to a site, whether the account has a
	// second factor anywhere (changing factors then takes one proved).
	CountPasskeys(ctx context.Context, userID string) (int, error)
	// PasskeyByCredentialID finds a passkey of site by its credential ID.
	PasskeyByCredentialID(ctx context.Context, site tenant.ID, credentialID []byte) (*Passkey, error)
	// PasskeyUsed records a sign-in with the passkey: its updated data
	// (sign count, flags) and when.
	PasskeyUsed(ctx context.Context, site tenant.ID, id int64, data string, at time.Time) error
	// RenamePasskey renames the user's passkey id at site.
	RenamePasskey(ctx context.Context, site tenant.ID, userID string, id int64, name string) error
	// DeletePasskey removes the user's passkey id at site.
	DeletePasskey(ctx context.Context, site tenant.ID, userID string, id int64) error

	// TOTPOf returns the account's authenticator (ErrNotFound: none).
	TOTPOf(ctx context.Context, userID string) (*TOTP, error)
	// EnableTOTP sets the account's authenticator, replacing any, and its
	// recovery codes (their hashes), replacing any.
	EnableTOTP(ctx context.Context, t *TOTP, codeHashes [][]byte) error
	// DisableTOTP removes the account's authenticator and recovery codes.
	DisableTOTP(ctx context.Context, userID string) error
	// UseTOTPStep records that a code of time step was accepted; false
	// when a code of that step or a later one was accepted already.
	UseTOTPStep(ctx context.Context, userID string, step int64) (bool, error)
	// UseRecoveryCode spends the account's unused recovery code with this
	// hash; false when there is none.
	UseRecoveryCode(ctx context.Context, userID string, codeHash []byte, at time.Time) (bool, error)
	// RecoveryCodesLeft counts the account's unused recovery codes.
	RecoveryCodesLeft(ctx context.Context, userID string) (int, error)
}

// FactorSupportStore is what the provider's support uses to recover an
// account (lectern user factors, user remove-factors): the account's
// passkeys at every site. It is kept apart from FactorStore, which the
// request code takes: a request works at one site and never lists another
// site's passkeys.
type FactorSupportStore interface {
	// AllPasskeys returns the user's passkeys at every site, by site and
	// then oldest first.
	AllPasskeys(ctx context.Context, userID string) ([]Passkey, error)
}
