package platform

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/lectern/lectern/authserver/keys"
	"github.com/lectern/lectern/authserver/password"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// Broadcast channels. Messages are a site ID in decimal.
const (
	// SitesChannel announces that a site was created or changed.
	SitesChannel = "lectern:sites"
	// KeysChannel announces that a site's key ring changed.
	KeysChannel = "lectern:keys"
)

// Platform performs the provider's operations.
type Platform struct {
	Store  storage.Store
	Keys   *keys.Manager
	Cache  storage.Cache
	Logger *slog.Logger
	// PasswordParams are the argon2id parameters of new passwords.
	PasswordParams password.Params
	// Mail sends the account mail (invitations, links); nil where a
	// command sends none.
	Mail *Mail

	laterOnce sync.Once
	later     *storage.Deleter
}

// deleter retries cache deletes that fail during an outage.
func (p *Platform) deleter() *storage.Deleter {
	p.laterOnce.Do(func() { p.later = storage.NewDeleter(p.Cache, p.Logger) })
	return p.later
}

// ErrInvalid wraps validation failures of operator input.
var ErrInvalid = errors.New("invalid input")

// CreateSite validates and stores a site, creates its key ring and
// announces it. Origin and aliases are canonicalized.
func (p *Platform) CreateSite(ctx context.Context, s *storage.Site) error {
	if err := validateSite(s); err != nil {
		return err
	}
	if err := p.Store.CreateSite(ctx, s); err != nil {
		return err
	}
	if _, err := p.Keys.CreateRing(ctx, s.ID); err != nil {
		return fmt.Errorf("site %s created but its key ring failed: %w (run: lectern keys rotate --site %s --activate-in 0)", s.Slug, err, s.Slug)
	}
	if err := p.reschedule(ctx, s.ID, KeyRotationDays(s)); err != nil {
		return fmt.Errorf("site %s created but its key rotation could not be scheduled: %w", s.Slug, err)
	}
	p.announce(ctx, SitesChannel, s.ID)
	return nil
}

// UpdateSite validates and stores a changed site and announces it.
func (p *Platform) UpdateSite(ctx context.Context, s *storage.Site) error {
	if err := validateSite(s); err != nil {
		return err
	}
	before, err := p.Store.SiteByID(ctx, s.ID)
	if err != nil {
		return err
	}
	if err := p.Store.UpdateSite(ctx, s); err != nil {
		return err
	}
	if days := KeyRotationDays(s); days != KeyRotationDays(before) {
		period := time.Duration(days) * 24 * time.Hour
		if days == 0 {
			period = p.Keys.RotationPeriod()
		}
		if err := p.Keys.Reschedule(ctx, s.ID, period); err != nil {
			return fmt.Errorf("site %s updated but its key rotation could not be rescheduled: %w", s.Slug, err)
		}
	}
	p.announce(ctx, SitesChannel, s.ID)
	return nil
}

// RotateKey adds a next key to the site's ring and announces it.
func (p *Platform) RotateKey(ctx context.Context, site tenant.ID, activateIn time.Duration) (*storage.SiteKey, error) {
	k, err := p.Keys.Rotate(ctx, site, activateIn)
	if err != nil {
		return nil, err
	}
	p.announce(ctx, KeysChannel, site)
	return k, nil
}

// CreateUser hashes the password and stores a new user. An operator
// creates it (CLI, demo seed) and vouches for the address: it counts as
// verified.
func (p *Platform) CreateUser(ctx context.Context, email, name, picture, pw string) (*storage.User, error) {
	if err := CheckPicture(picture); err != nil {
		return nil, err
	}
	u, err := p.newUser(ctx, email, name, pw, nil)
	if err != nil {
		return nil, err
	}
	u.Picture, u.EmailVerified = picture, true
	if err := p.Store.CreateUser(ctx, u); err != nil {
		return nil, err
	}
	return u, nil
}

// MinPassword and MaxPassword bound a new password: at least MinPassword
// characters (what a person counts, so "ääää" is four, not eight) and at
// most MaxPassword bytes of UTF-8 (the bound keeps argon2id's input small).
const (
	MinPassword = 8
	MaxPassword = 1024
)

// CheckPassword says what is wrong with a new password, if anything.
func CheckPassword(pw string) error {
	switch {
	case utf8.RuneCountInString(pw) < MinPassword:
		return fmt.Errorf("%w: password must have at least %d characters", ErrInvalid, MinPassword)
	case len(pw) > MaxPassword:
		return fmt.Errorf("%w: password is too long (at most %d bytes)", ErrInvalid, MaxPassword)
	}
	return nil
}

// maxName bounds an account's name, in characters.
const maxName = 200

// isText reports whether s is text a page can show: valid UTF-8 without
// control characters. Names are written into every page and token; bytes
// that are not text would be written raw into UTF-8 pages, and PostgreSQL
// refuses them where SQLite stores them.
func isText(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}

// newUser validates a new account and hashes its password with hash
// (HashPassword); it is not stored.
func (p *Platform) newUser(ctx context.Context, email, name, pw string, hash Hasher) (*storage.User, error) {
	// One address check for every way an account is made (the CLI, the
	// admin area and API, invitations, sign-up): "@" or "x@y@z" would be
	// an account no reset link can reach.
	email, err := NormalizeEmail(email)
	if err != nil {
		return nil, err
	}
	name = strings.TrimSpace(name)
	if name == "" || !isText(name) {
		// The forms show this as "Enter your name" (the catalogs key on
		// the text), for a name that is not one line of text too.
		return nil, fmt.Errorf("%w: name is required", ErrInvalid)
	}
	if utf8.RuneCountInString(name) > maxName {
		return nil, fmt.Errorf("%w: name must have at most %d characters", ErrInvalid, maxName)
	}
	// CheckPassword (in HashPassword) bounds the length, the only input
	// password.Hash refuses: its errors, and a Hasher's refusals, pass
	// through as they are.
	ph, err := p.HashPassword(ctx, pw, hash)
	if err != nil {
		return nil, err
	}
	return &storage.User{ID: NewUserID(), Email: email, Name: name, PasswordHash: ph}, nil
}

// GrantRole gives the user with email a role at site.
func (p *Platform) GrantRole(ctx context.Context, site tenant.ID, email, role string) (*storage.User, error) {
	if !storage.ValidRole(role) {
		return nil, fmt.Errorf("%w: role %q is not one of owner, admin, lecturer, student", ErrInvalid, role)
	}
	u, err := p.Store.UserByEmail(ctx, email)
	if err != nil {
		return nil, err
	}
	if err := p.Store.GrantRole(ctx, site, u.ID, role); err != nil {
		return nil, err
	}
	p.forgetRoles(ctx, site, u.ID)
	return u, nil
}

// RevokeRole takes a role at site from the user with email.
func (p *Platform) RevokeRole(ctx context.Context, site tenant.ID, email, role string) (*storage.User, error) {
	u, err := p.Store.UserByEmail(ctx, email)
	if err != nil {
		return nil, err
	}
	if err := p.Store.RevokeRole(ctx, site, u.ID, role); err != nil {
		return nil, err
	}
	p.forgetRoles(ctx, site, u.ID)
	return u, nil
}

// rolesTTL bounds how stale cached roles may be when a change is made
// outside the platform (directly in the database).
const rolesTTL = time.Minute

// RolesAt returns the user's roles at site, from the cache when it can.
// Role changes through the platform delete the cached copy at once.
func (p *Platform) RolesAt(ctx context.Context, site tenant.ID, userID string) ([]string, error) {
	key := storage.RolesKey(site, userID)
	if raw, err := p.Cache.Get(ctx, key); err == nil {
		var roles []string
		if json.Unmarshal(raw, &roles) == nil {
			return roles, nil
		}
	}
	roles, err := p.Store.RolesAt(ctx, site, userID)
	if err != nil {
		return nil, err
	}
	if roles == nil {
		roles = []string{}
	}
	if b, err := json.Marshal(roles); err == nil {
		_ = p.Cache.Set(ctx, key, b, rolesTTL)
	}
	return roles, nil
}

// ForgetRoles drops the cached copies of a user's roles and claims at site;
// whoever changes roles outside the platform calls it.
func (p *Platform) ForgetRoles(ctx context.Context, site tenant.ID, userID string) {
	p.forgetRoles(ctx, site, userID)
}

func (p *Platform) forgetRoles(ctx context.Context, site tenant.ID, userID string) {
	if p.Cache == nil {
		return
	}
	if err := p.deleter().Delete(ctx, rolesTTL, storage.RolesKey(site, userID), storage.ProfileKey(site, userID)); err != nil && p.Logger != nil {
		p.Logger.WarnContext(ctx, "cached roles not cleared yet; they are deleted as soon as the cache answers", "user", userID, "err", err)
	}
}

// announce broadcasts a change. A failed broadcast is logged, not fatal:
// the other replicas' caches expire within seconds anyway.
func (p *Platform) announce(ctx context.Context, channel string, site tenant.ID) {
	p.Keys.Invalidate(site)
	if p.Cache == nil {
		return
	}
	if err := p.Cache.Publish(ctx, channel, []byte(strconv.FormatInt(int64(site), 10))); err != nil && p.Logger != nil {
		p.Logger.WarnContext(ctx, "change broadcast failed; other replicas see it when their caches expire", "channel", channel, "site", site, "err", err)
	}
}

// ClientInvalidator drops cached clients (the authorization server).
type ClientInvalidator interface {
	InvalidateClient(site tenant.ID, clientID string)
	// InvalidateAllClients drops the clients of every site.
	InvalidateAllClients()
}

// Invalidator is what a broadcast invalidates: the site resolver.
type Invalidator interface {
	Invalidate(tenant.ID)
	InvalidateAll()
}

// watchMaxBackoff bounds the wait between subscription attempts: a
// replica subscribes again within it of the cache's return, however long
// the outage was. One attempt is one connection and one command, cheap for
// the cache even from a fleet of replicas.
const watchMaxBackoff = 5 * time.Second

// watchHealthy is how long a subscription must have lasted for the next
// interruption to be retried after a second again. One that ends sooner (a
// connection that keeps dropping) keeps the backoff growing instead.
const watchHealthy = 5 * time.Second

// Watch applies change broadcasts to this process's in-process caches until
// ctx ends. It never blocks start-up: while the cache is unreachable it
// retries with backoff (back to a second once a subscription has been in
// place for watchHealthy, so every interruption costs about a second), and
// whenever a subscription comes into place it drops every cached site,
// because announcements may have been missed before it: after a gap, and
// before the first one too (start-up does not wait for it longer than a few
// seconds, so sites may be served and cached meanwhile). After a gap it
// drops every cached key ring and client too; what was cached before the
// first subscription expires within a minute. The returned channel closes
// once the first subscription is in place.
func (p *Platform) Watch(ctx context.Context, sites Invalidator, clients ClientInvalidator) <-chan struct{} {
	subscribed := make(chan struct{})
	go func() {
		backoff := time.Second
		first := true
		for ctx.Err() == nil {
			var since time.Time
			err := p.watchOnce(ctx, sites, clients, func() {
				since = time.Now()
				if first {
					first = false
					close(subscribed)
				} else {
					p.dropRingsAndClients(clients)
				}
			})
			if ctx.Err() != nil {
				return
			}
			if !since.IsZero() && time.Since(since) >= watchHealthy {
				backoff = time.Second
			}
			if p.Logger != nil {
				p.Logger.WarnContext(ctx, "change broadcasts interrupted; resubscribing", "err", err, "retry_in", backoff)
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, watchMaxBackoff)
		}
	}()
	return subscribed
}

// watchOnce subscribes and applies messages until the subscription ends.
func (p *Platform) watchOnce(ctx context.Context, sites Invalidator, clients ClientInvalidator, subscribed func()) error {
	subCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	sitesCh, err := p.Cache.Subscribe(subCtx, SitesChannel)
	if err != nil {
		return err
	}
	keysCh, err := p.Cache.Subscribe(subCtx, KeysChannel)
	if err != nil {
		return err
	}
	clientsCh, err := p.Cache.Subscribe(subCtx, ClientsChannel)
	if err != nil {
		return err
	}
	sites.InvalidateAll()
	subscribed()
	for {
		select {
		case m, ok := <-sitesCh:
			if !ok {
				return errors.New("site broadcasts closed")
			}
			if id, err := strconv.ParseInt(string(m), 10, 64); err == nil {
				sites.Invalidate(tenant.ID(id))
				p.Keys.Invalidate(tenant.ID(id))
			}
		case m, ok := <-keysCh:
			if !ok {
				return errors.New("key broadcasts closed")
			}
			if id, err := strconv.ParseInt(string(m), 10, 64); err == nil {
				p.Keys.Invalidate(tenant.ID(id))
			}
		case m, ok := <-clientsCh:
			if !ok {
				return errors.New("client broadcasts closed")
			}
			siteStr, clientID, found := strings.Cut(string(m), ":")
			if id, err := strconv.ParseInt(siteStr, 10, 64); err == nil && found && clients != nil {
				clients.InvalidateClient(tenant.ID(id), clientID)
			}
		}
	}
}

// dropRingsAndClients drops every cached key ring and client, after a gap
// in the subscription: broadcasts about any of them may have been missed.
func (p *Platform) dropRingsAndClients(clients ClientInvalidator) {
	if p.Keys != nil {
		p.Keys.InvalidateAll()
	}
	if clients != nil {
		clients.InvalidateAllClients()
	}
}

func validateSite(s *storage.Site) error {
	s.Slug = strings.TrimSpace(s.Slug)
	if !validSlug(s.Slug) {
		return fmt.Errorf("%w: slug %q must be 1-64 lower-case letters, digits and '-'", ErrInvalid, s.Slug)
	}
	if strings.TrimSpace(s.Name) == "" {
		return fmt.Errorf("%w: name is required", ErrInvalid)
	}
	origin, err := tenant.CanonicalOrigin(s.Origin)
	if err != nil {
		return fmt.Errorf("%w: origin %q must be scheme://host[:port] (http or https, no path)", ErrInvalid, s.Origin)
	}
	s.Origin = origin
	scheme := origin[:strings.Index(origin, "://")]
	for i, a := range s.Aliases {
		h, err := tenant.CanonicalHost(a, scheme)
		if err != nil {
			return fmt.Errorf("%w: alias %q must be host[:port]", ErrInvalid, a)
		}
		s.Aliases[i] = h
	}
	if a := s.Accounts(); a.MailFromAddress != "" {
		if _, err := NormalizeEmail(a.MailFromAddress); err != nil {
			return fmt.Errorf("%w: mail sender address %q is not an e-mail address", ErrInvalid, a.MailFromAddress)
		}
	}
	if err := CheckMailFromName(s.Accounts().MailFromName); err != nil {
		return err
	}
	if !s.RegistrationVariant.Valid() {
		return fmt.Errorf("%w: registration variant %q must be A or B", ErrInvalid, s.RegistrationVariant)
	}
	// Name, description, locale and trailing dots, for every caller (the
	// CLI, site import, the admin API, the admin area).
	return CheckSite(s)
}

func validSlug(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// NewUserID returns a random user ID ("usr_" and 26 characters, 128 bits).
func NewUserID() string { return "usr_" + randomID() }

// NewGrantID returns a random grant ID.
func NewGrantID() string { return "grt_" + randomID() }

func randomID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return idEncoding.EncodeToString(b[:])
}
