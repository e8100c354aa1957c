package platform

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/language"

	"github.com/lectern/lectern/authserver/clientmeta"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// Bounds of a site's texts. They are the admin API's (PATCH /api/v1/school),
// so a site the provider creates can be edited by its operators unchanged.
const (
	maxSiteName        = 200
	maxSiteDescription = 5000
	maxLocale          = 35
)

// CheckSite says what is wrong with the parts of a site that validateSite
// leaves alone: its name, description and locale (written into every page,
// mail and consent screen, and refused by PostgreSQL when they are not
// UTF-8), and its hosts: an origin or alias with a trailing dot is refused,
// because the Host resolver keeps the dot (tenant.CanonicalHost) and such a
// host would be a second site for the same DNS name; an alias given twice,
// or naming the origin's host, is refused rather than failing the insert.
// Errors wrap ErrInvalid.
func CheckSite(s *storage.Site) error {
	switch name := strings.TrimSpace(s.Name); {
	case name == "":
		return fmt.Errorf("%w: name is required", ErrInvalid)
	case !utf8.ValidString(s.Name):
		return fmt.Errorf("%w: name must be valid UTF-8", ErrInvalid)
	case !isText(s.Name):
		return fmt.Errorf("%w: name must be one line without control characters", ErrInvalid)
	case utf8.RuneCountInString(s.Name) > maxSiteName:
		return fmt.Errorf("%w: name must have at most %d characters", ErrInvalid, maxSiteName)
	}
	switch {
	case !utf8.ValidString(s.Description):
		return fmt.Errorf("%w: description must be valid UTF-8", ErrInvalid)
	case strings.IndexFunc(s.Description, func(r rune) bool {
		return unicode.IsControl(r) && r != '\n' && r != '\r' && r != '\t'
	}) >= 0:
		return fmt.Errorf("%w: description must not contain control characters", ErrInvalid)
	case utf8.RuneCountInString(s.Description) > maxSiteDescription:
		return fmt.Errorf("%w: description must have at most %d characters", ErrInvalid, maxSiteDescription)
	}
	if err := CheckLocale(s.Locale); err != nil {
		return err
	}
	origin, err := tenant.CanonicalOrigin(s.Origin)
	if err != nil {
		return nil // validateSite says what is wrong with it
	}
	scheme, host, _ := strings.Cut(origin, "://")
	if trailingDot(host) {
		return fmt.Errorf("%w: origin %q ends in a dot: give the host without it", ErrInvalid, s.Origin)
	}
	var seen []string
	for _, a := range s.Aliases {
		h, err := tenant.CanonicalHost(a, scheme)
		switch {
		case err != nil:
			return nil // validateSite says what is wrong with it
		case trailingDot(h):
			return fmt.Errorf("%w: alias %q ends in a dot: give the host without it", ErrInvalid, a)
		case h == host:
			return fmt.Errorf("%w: alias %q is the origin's host", ErrInvalid, a)
		case slices.Contains(seen, h):
			return fmt.Errorf("%w: alias %q is given twice", ErrInvalid, a)
		}
		seen = append(seen, h)
	}
	return nil
}

// trailingDot reports whether the host of a canonical host[:port] ends in
// a dot.
func trailingDot(hostport string) bool {
	host := hostport
	if i := strings.LastIndexByte(hostport, ':'); i >= 0 && !strings.HasSuffix(hostport, "]") {
		host = hostport[:i]
	}
	return strings.HasSuffix(host, ".")
}

// CheckLocale says what is wrong with a site's locale: it must be a BCP 47
// language tag (en, pt-BR; docs/branding.md reduces it to one of the
// catalogs' languages, else English). Empty is English.
func CheckLocale(locale string) error {
	if locale == "" {
		return nil
	}
	if len(locale) > maxLocale {
		return fmt.Errorf("%w: locale %q is too long (at most %d characters)", ErrInvalid, locale, maxLocale)
	}
	if _, err := language.Parse(locale); err != nil {
		return fmt.Errorf("%w: locale %q is not a BCP 47 language tag such as en or pt-BR", ErrInvalid, locale)
	}
	return nil
}

// CheckPicture says what is wrong with a picture URL the provider sets for
// an account (lectern user create --picture; the OIDC picture claim, "a URL
// of an image", OIDC Core §5.1): empty, or an absolute https URL as a
// client's logo_uri (clientmeta.IsHTTPSURL), or http to a loopback host for
// development. Never javascript: or data:, which a relying party's page
// would run or render.
func CheckPicture(picture string) error {
	if picture == "" || clientmeta.IsHTTPSURL(picture) {
		return nil
	}
	if rest, ok := strings.CutPrefix(picture, "http://"); ok && clientmeta.IsHTTPSURL("https://"+rest) {
		if u, err := url.Parse(picture); err == nil && clientmeta.IsLoopbackHost(u.Hostname()) {
			return nil
		}
	}
	return fmt.Errorf("%w: picture %q must be an absolute https URL (http only for 127.0.0.1, ::1 or localhost)", ErrInvalid, picture)
}

// hostOwners is the look-up SiteCollision needs beyond storage.Store.
type hostOwners interface {
	HostOwners(ctx context.Context, hosts []string) (map[string]tenant.ID, error)
}

// SiteCollision names what of s another site holds already: its slug, or
// its origin's or an alias's host. It returns nil when nothing collides (a
// race may still make the write a storage.ErrConflict), else an error
// wrapping storage.ErrConflict that says what collided with which site, so
// that the write need not fail in the database to be refused. s is the
// site as it will be stored; its own ID (0 for a new site) is no collision.
func (p *Platform) SiteCollision(ctx context.Context, s *storage.Site) error {
	other, err := p.Store.SiteBySlug(ctx, strings.TrimSpace(s.Slug))
	switch {
	case err == nil && other.ID != s.ID:
		return fmt.Errorf("%w: slug %q is taken by site %d", storage.ErrConflict, other.Slug, other.ID)
	case err != nil && !errors.Is(err, storage.ErrNotFound):
		return err
	}
	owners, ok := p.Store.(hostOwners)
	if !ok {
		return nil
	}
	origin, err := tenant.CanonicalOrigin(s.Origin)
	if err != nil {
		return nil
	}
	scheme, host, _ := strings.Cut(origin, "://")
	hosts := []string{host}
	for _, a := range s.Aliases {
		if h, err := tenant.CanonicalHost(a, scheme); err == nil && !slices.Contains(hosts, h) {
			hosts = append(hosts, h)
		}
	}
	taken, err := owners.HostOwners(ctx, hosts)
	if err != nil {
		return err
	}
	for i, h := range hosts {
		if id, ok := taken[h]; ok && id != s.ID {
			what := "alias"
			if i == 0 {
				what = "origin's host"
			}
			return fmt.Errorf("%w: %s %q is served by site %d", storage.ErrConflict, what, h, id)
		}
	}
	return nil
}
