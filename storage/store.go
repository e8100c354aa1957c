package storage

import (
	"context"
	"time"

	"github.com/lectern/lectern/tenant"
)

// SiteStore keeps sites and the hosts that resolve to them.
type SiteStore interface {
	// CreateSite inserts site and its host rows (origin host and aliases).
	// A taken slug, origin or alias is ErrConflict.
	CreateSite(ctx context.Context, site *Site) error
	// UpdateSite rewrites a site and its host rows.
	UpdateSite(ctx context.Context, site *Site) error
	SiteByID(ctx context.Context, id tenant.ID) (*Site, error)
	SiteBySlug(ctx context.Context, slug string) (*Site, error)
	// ListSites returns up to limit sites with ID > after, in ID order.
	ListSites(ctx context.Context, after tenant.ID, limit int) ([]Site, error)
	// LookupHost implements tenant.Lookup.
	LookupHost(ctx context.Context, host string) (*tenant.Site, error)
}

// KeyStore keeps the sealed signing keys of each site.
type KeyStore interface {
	CreateSiteKey(ctx context.Context, key *SiteKey) error
	// SiteKeys returns the site's keys that are not yet retired, or retired
	// after retiredAfter (still published), newest first.
	SiteKeys(ctx context.Context, site tenant.ID, retiredAfter time.Time) ([]SiteKey, error)
	// SetSiteKeyState moves a key to state; retiring sets RetiredAt to at.
	SetSiteKeyState(ctx context.Context, site tenant.ID, kid, state string, at time.Time) error
}

// UserStore keeps platform-wide people and their roles at sites.
type UserStore interface {
	// CreateUser inserts a user; a taken e-mail is ErrConflict.
	CreateUser(ctx context.Context, u *User) error
	UpdateUser(ctx context.Context, u *User) error
	// SetUserPicture sets the user's uploaded picture (PictureFile; empty
	// removes it) and returns the one it replaced.
	SetUserPicture(ctx context.Context, userID, file string) (previous string, err error)
	// SetUserLanguage remembers the language the person chose (empty:
	// none); nothing else of the user changes.
	SetUserLanguage(ctx context.Context, userID, lang string) error
	UserByID(ctx context.Context, id string) (*User, error)
	// UserByEmail matches the e-mail case-insensitively.
	UserByEmail(ctx context.Context, email string) (*User, error)
	// GrantRole gives user a role at site; granting a held role is a no-op.
	GrantRole(ctx context.Context, site tenant.ID, userID, role string) error
	RevokeRole(ctx context.Context, site tenant.ID, userID, role string) error
	// RolesAt returns the user's roles at site, sorted.
	RolesAt(ctx context.Context, site tenant.ID, userID string) ([]string, error)
	// SitesOfUser returns every site where the user holds a role.
	SitesOfUser(ctx context.Context, userID string) ([]UserSiteRoles, error)
}

// ClientStore keeps OAuth clients, vendor integrations and the CIMD host
// allowlist.
type ClientStore interface {
	// CreateClient inserts a client; a client_id taken at the same site (or
	// platform-wide) is ErrConflict.
	CreateClient(ctx context.Context, c *Client) error
	// UpdateClient rewrites the client named by its SiteID and ClientID
	// (SiteID nil: the platform-wide client); neither can change.
	UpdateClient(ctx context.Context, c *Client) error
	// ClientByID returns the client with clientID at site, or the
	// platform-wide client with that ID.
	ClientByID(ctx context.Context, site tenant.ID, clientID string) (*Client, error)
	// ListClients returns the site's clients (of one source when source
	// is not empty: the operators' applications without a Variant B site's
	// many registrations), oldest first.
	ListClients(ctx context.Context, site tenant.ID, source string) ([]Client, error)
	DeleteClient(ctx context.Context, site tenant.ID, clientID string) error
	// TouchClient records that the client completed an authorization at
	// (it is written only when it was never set or is over a day old).
	TouchClient(ctx context.Context, site tenant.ID, clientID string, at time.Time) error
	// PurgeUnusedClients deletes the clients of source, at every site, that
	// were created before and never used; it returns how many.
	PurgeUnusedClients(ctx context.Context, source string, before time.Time) (int64, error)

	// CreateVendorIntegration inserts the integration and its platform-wide
	// client in one transaction.
	CreateVendorIntegration(ctx context.Context, v *VendorIntegration, c *Client) error
	ListVendorIntegrations(ctx context.Context) ([]VendorIntegration, error)

	AllowCIMDHost(ctx context.Context, h *CIMDHost) error
	// CIMDHost returns the allowlist entry for host at site, or the
	// platform-wide one.
	CIMDHost(ctx context.Context, site tenant.ID, host string) (*CIMDHost, error)
}

// GrantStore keeps grants, refresh tokens and remembered consent. Whether a
// refresh token was used and whether a grant is revoked is decided here, in
// one transaction, so that parallel or replayed refreshes cannot fork a grant
// (DESIGN §4).
type GrantStore interface {
	// CreateGrant inserts a grant, its first refresh token and the given
	// audit events together: all or nothing.
	CreateGrant(ctx context.Context, g *Grant, rt *RefreshToken, audit ...*AuditEvent) error
	GrantByID(ctx context.Context, site tenant.ID, id string) (*Grant, error)
	// RotateRefreshToken marks the token with hash oldHash used and inserts
	// next in its place, returning the grant. The grant's LastUsedAt is
	// rewritten when it is over an hour old. A token that was used already
	// revokes the grant and returns the grant (to push the revocation to the
	// cache) with ErrRefreshReused; an unknown, expired or revoked token, or
	// one of a revoked or expired grant, is ErrNotFound.
	RotateRefreshToken(ctx context.Context, site tenant.ID, oldHash []byte, next *RefreshToken, now time.Time) (*Grant, error)
	// RefreshTokenByHash returns a refresh token and its grant. A token of
	// a revoked grant is returned with RevokedAt set.
	RefreshTokenByHash(ctx context.Context, site tenant.ID, hash []byte) (*RefreshToken, *Grant, error)
	// RevokeGrant revokes the grant, and with it every refresh token of it
	// (see RefreshTokenByHash), and returns the site's revocation version
	// it committed (see RevocationVersions).
	// Revoking a revoked grant changes nothing but the version; an unknown
	// one is ErrNotFound.
	RevokeGrant(ctx context.Context, site tenant.ID, id string, now time.Time) (int64, error)
	// RevokedGrants returns the site's grants revoked after since, to refill
	// the cache's revocation copies after a Redis loss.
	RevokedGrants(ctx context.Context, site tenant.ID, since time.Time) ([]RevokedGrant, error)
	// RevokeToken records the revocation of one access token and returns
	// the site's revocation version it committed; revoking it again changes
	// nothing but the version.
	RevokeToken(ctx context.Context, t *RevokedToken) (int64, error)
	// RevocationVersions returns the revocation version of each of sites
	// (an unknown site is absent): a counter every revocation of the site
	// (RevokeGrant, RevokeToken, a reused refresh token) raises by one in
	// its own transaction. A cache copy of a site's revocations that is
	// complete up to the current version vouches for every token; one that
	// is behind may have lost revocations (DESIGN §4).
	RevocationVersions(ctx context.Context, sites []tenant.ID) (map[tenant.ID]int64, error)
	// RevokedTokens returns the site's revoked access tokens that have not
	// expired at now.
	RevokedTokens(ctx context.Context, site tenant.ID, now time.Time) ([]RevokedToken, error)
	// TokenRevoked reports whether the access token jti of site is revoked.
	TokenRevoked(ctx context.Context, site tenant.ID, jti string) (bool, error)
	// TouchGrant records that the grant was used (for "last used" displays).
	TouchGrant(ctx context.Context, site tenant.ID, id string, at time.Time) error
	// ListGrants returns the site's grants, of one user when userID != "".
	ListGrants(ctx context.Context, site tenant.ID, userID string, includeRevoked bool) ([]Grant, error)
	// LiveGrants returns one page of the site's live grants matching q,
	// newest first, and how many match in all: what a list page shows
	// without loading a busy site's every grant.
	LiveGrants(ctx context.Context, site tenant.ID, q GrantQuery) ([]Grant, int, error)
	// LiveGrantCounts returns how many live grants each client has at the
	// site at time at (clients without any are absent).
	LiveGrantCounts(ctx context.Context, site tenant.ID, at time.Time) (map[string]int, error)

	Consent(ctx context.Context, site tenant.ID, userID, clientID string) (*Consent, error)
	SaveConsent(ctx context.Context, c *Consent) error
}

// GrantQuery selects live grants: neither revoked nor past their absolute
// limit at time At.
type GrantQuery struct {
	At       time.Time
	UserID   string // one person's grants, when set
	ClientID string // one client's grants, when set
	// Offset and Limit pick the page; Limit <= 0 means every match.
	Offset, Limit int
}

// RevokedGrant names a revoked grant.
type RevokedGrant struct {
	SiteID    tenant.ID
	GrantID   string
	RevokedAt time.Time
}

// AuditStore appends and lists audit events.
type AuditStore interface {
	RecordAudit(ctx context.Context, e *AuditEvent) error
	// ListAudit returns up to limit events of site with ID < before (0: the
	// newest), newest first.
	ListAudit(ctx context.Context, site tenant.ID, before int64, limit int) ([]AuditEvent, error)
}

// Store is everything a backend provides.
type Store interface {
	SiteStore
	KeyStore
	UserStore
	ClientStore
	GrantStore
	AuditStore
	MemberStore
	CatalogStore
	OperatorStore
	AdminStore
	AccountStore
	FactorStore
	// Ping reports whether the backend answers.
	Ping(ctx context.Context) error
	Close() error
}
