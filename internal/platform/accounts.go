package platform

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/mail"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/lectern/lectern/i18n"
	lmail "github.com/lectern/lectern/mail"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// Lifetimes of mailed links (docs/decisions.md).
const (
	InvitationLifetime  = 7 * 24 * time.Hour
	ResetLifetime       = 30 * time.Minute
	SignUpLifetime      = 24 * time.Hour
	EmailChangeLifetime = 24 * time.Hour
)

// MailPerAddress bounds the mail one address gets for one purpose,
// platform-wide, so that no form can be used to flood someone's inbox.
var MailPerAddress = storage.Limit{Rate: 5, Period: time.Hour, Burst: 5}

// DefaultMailFrom is the sender address when --mail-from is not set.
const DefaultMailFrom = "no-reply@localhost"

// ErrMailLimited: the address got as much mail of this kind as it may for
// now.
var ErrMailLimited = errors.New("too many messages to this address; try again later")

// ErrLinkInvalid, ErrLinkExpired: a mailed link that never worked here, and
// one that worked once (used, revoked or too old).
var (
	ErrLinkInvalid = errors.New("this link is not valid")
	ErrLinkExpired = errors.New("this link has expired or was already used")
)

// Mail is what the platform needs to send mail: the templates, the
// platform's sender address, and a way to wake the sender loop.
type Mail struct {
	Templates *lmail.Templates
	// From is the platform's sender address (--mail-from).
	From string
	// Wake tells the sender loop that something was enqueued (may be nil).
	Wake func()
}

func (p *Platform) wake() {
	if p.Mail != nil && p.Mail.Wake != nil {
		p.Mail.Wake()
	}
}

// CheckMailFromName says what is wrong with a site's sender name (the
// mail_from_name setting), if anything. Empty is the site's name. A name
// is text (one line, no control characters, valid UTF-8) of at most 200
// characters, and must read back as itself from the From header the
// transport writes (lmail.SenderNameWorks): the transport quotes names
// itself, so only what no header can carry is refused.
func CheckMailFromName(name string) error {
	switch {
	case name == "":
		return nil
	case !isText(name) || utf8.RuneCountInString(name) > maxName:
		return fmt.Errorf("%w: mail sender name must be one line of text of at most %d characters", ErrInvalid, maxName)
	case !lmail.SenderNameWorks(name):
		return fmt.Errorf("%w: %w", ErrInvalid, ErrSenderName)
	}
	return nil
}

// ErrSenderName: a sender name that is text, but that no From header
// carries as itself.
var ErrSenderName = errors.New("mail sender name cannot be written in a From header (with letters outside ASCII, leave out the backslash)")

// SenderOf is the From of a site's mail: its own name and address when set
// (site settings), else the site's name and the platform's address.
func (p *Platform) SenderOf(site *storage.Site) lmail.From {
	a := site.Accounts()
	f := lmail.From{Name: site.Name, Address: DefaultMailFrom}
	if p.Mail != nil && p.Mail.From != "" {
		f.Address = p.Mail.From
	}
	if a.MailFromName != "" {
		f.Name = a.MailFromName
	}
	if a.MailFromAddress != "" {
		f.Address = a.MailFromAddress
	}
	return f
}

// compose renders a message of kind for site, in the site's colours and in
// lang: the recipient's language (their account's, or the page's they
// used), else the site's default language.
func (p *Platform) compose(ctx context.Context, kind string, site *storage.Site, lang string, d lmail.Data) (*storage.OutboxMessage, error) {
	if p.Mail == nil || p.Mail.Templates == nil {
		return nil, errors.New("platform: mail is not configured")
	}
	d.Lang = i18n.Normalize(lang)
	if d.Lang == "" {
		d.Lang = i18n.Normalize(site.Locale)
	}
	a, err := p.Store.Appearance(ctx, site.ID)
	switch {
	case err == nil:
		d.PrimaryColor, d.AccentColor, d.BackgroundColor, d.TextColor = a.PrimaryColor, a.AccentColor, a.BackgroundColor, a.TextColor
	case !errors.Is(err, storage.ErrNotFound):
		return nil, err
	}
	d.SiteName, d.SiteOrigin = site.Name, site.Origin
	d.SignInLink = site.Origin + "/login"
	d.ResetLink = site.Origin + "/password/forgot"
	return p.Mail.Templates.Compose(kind, site.ID, p.SenderOf(site), d)
}

// allowMail applies MailPerAddress to address for purpose. The key is
// platform-wide (an address is someone's wherever the form was) and
// hash-tagged by the address.
func (p *Platform) allowMail(ctx context.Context, purpose, address string) error {
	sum := sha256.Sum256([]byte(strings.ToLower(strings.TrimSpace(address))))
	key := "{a" + base64.RawURLEncoding.EncodeToString(sum[:12]) + "}:mail:" + purpose
	ok, _, err := p.Cache.Allow(ctx, key, MailPerAddress)
	if err != nil {
		return err
	}
	if !ok {
		return ErrMailLimited
	}
	return nil
}

// NewLinkToken returns a 256-bit random token for a mailed link and the
// SHA-256 that is stored in its place.
func NewLinkToken() (string, []byte) {
	var b [32]byte
	_, _ = rand.Read(b[:])
	tok := base64.RawURLEncoding.EncodeToString(b[:])
	return tok, HashLinkToken(tok)
}

// HashLinkToken is the stored form of a link token.
func HashLinkToken(tok string) []byte {
	sum := sha256.Sum256([]byte(tok))
	return sum[:]
}

// sameHash compares a stored hash with a token's in constant time.
func sameHash(stored []byte, tok string) bool {
	return subtle.ConstantTimeCompare(stored, HashLinkToken(tok)) == 1
}

// validLinkToken rejects what cannot be one of our tokens before any
// lookup.
func validLinkToken(tok string) bool {
	if len(tok) != 43 {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(tok)
	return err == nil
}

// NormalizeEmail checks an address typed by a person and returns it
// lower-cased and trimmed.
func NormalizeEmail(s string) (string, error) {
	s = strings.TrimSpace(s)
	a, err := mail.ParseAddress(s)
	if err != nil || a.Address != s || len(s) > 320 || !strings.Contains(s, "@") {
		return "", fmt.Errorf("%w: %q is not an e-mail address", ErrInvalid, s)
	}
	return strings.ToLower(s), nil
}

func link(site *storage.Site, path, tok string) string {
	return site.Origin + path + "?token=" + url.QueryEscape(tok)
}

// linkToken finds the token of purpose, checking it was issued for site.
func (p *Platform) linkToken(ctx context.Context, site tenant.ID, purpose, tok string, now time.Time) (*storage.AccountToken, error) {
	if !validLinkToken(tok) {
		return nil, ErrLinkInvalid
	}
	t, err := p.Store.AccountTokenByHash(ctx, purpose, HashLinkToken(tok))
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return nil, ErrLinkInvalid
	case err != nil:
		return nil, err
	case !sameHash(t.TokenHash, tok) || t.SiteID != site:
		// Another site's link is no link here.
		return nil, ErrLinkInvalid
	case t.UsedAt != nil || !now.Before(t.ExpiresAt):
		return t, ErrLinkExpired
	}
	return t, nil
}

// forgetUser drops the cached claims of a changed account at every site
// where it holds a role.
func (p *Platform) forgetUser(ctx context.Context, userID string) {
	sites, err := p.Store.SitesOfUser(ctx, userID)
	if err != nil {
		return
	}
	for _, s := range sites {
		p.forgetRoles(ctx, s.SiteID, userID)
	}
}
