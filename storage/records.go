package storage

import (
	"time"

	"github.com/lectern/lectern/tenant"
)

// Site is the stored form of a course site (DESIGN §3).
type Site struct {
	ID                  tenant.ID `gorm:"primaryKey;autoIncrement"`
	Slug                string
	Name                string
	Origin              string
	Aliases             []string `gorm:"serializer:json"`
	RegistrationVariant tenant.Variant
	IDTokensEnabled     bool
	MCPConnectionsBeta  bool `gorm:"column:mcp_connections_beta"`
	CIMDOpen            bool `gorm:"column:cimd_open"`
	Description         string
	Locale              string
	Settings            map[string]any `gorm:"serializer:json"`
	CreatedAt           time.Time
	UpdatedAt           time.Time
}

// Tenant returns the request-path view of the site.
func (s *Site) Tenant() *tenant.Site {
	return &tenant.Site{
		ID:             s.ID,
		Slug:           s.Slug,
		Name:           s.Name,
		Origin:         s.Origin,
		Aliases:        append([]string(nil), s.Aliases...),
		Variant:        s.RegistrationVariant,
		IDTokens:       s.IDTokensEnabled,
		MCPConnections: s.MCPConnectionsBeta,
		CIMDOpen:       s.CIMDOpen,
		SignUp:         s.Accounts().SignUp,
		StaffMFA:       s.Accounts().StaffMFA,
		Description:    s.Description,
		Locale:         s.Locale,
		UpdatedAt:      s.UpdatedAt,
		ProviderLimits: s.ProviderLimits(),
		OperatorLimits: s.OperatorLimits(),
	}
}

// SiteHost maps one host (the origin's, or an alias) to its site. Host
// resolution is an indexed lookup in this table.
type SiteHost struct {
	Host   string `gorm:"primaryKey"`
	SiteID tenant.ID
}

// Key states of a site's signing key ring (DESIGN §4).
const (
	KeyNext    = "next"
	KeyActive  = "active"
	KeyRetired = "retired"
)

// SiteKey is one ES256 key of a site's ring. The private key is sealed with
// AES-256-GCM under the platform key-encryption key; only authserver/keys can
// open it.
type SiteKey struct {
	ID            int64 `gorm:"primaryKey;autoIncrement"`
	SiteID        tenant.ID
	KID           string `gorm:"column:kid"`
	Alg           string
	PublicJWK     string `gorm:"column:public_jwk"`
	SealedPrivate []byte
	State         string
	// ActivatesAt is when a "next" key starts signing (pre-publication delay).
	ActivatesAt time.Time
	// RetiredAt is when the key stopped signing; it stays published until
	// every token it signed has expired.
	RetiredAt *time.Time
	// RotateAt is when the rotation scheduler replaces this key (active
	// keys); nil once its rotation started, or before it was scheduled.
	RotateAt  *time.Time
	CreatedAt time.Time
}

// Lease is a named lock held by one process until ExpiresAt: the key
// rotation scheduler runs where it holds its lease.
type Lease struct {
	Name      string `gorm:"primaryKey"`
	Holder    string
	ExpiresAt time.Time
}

// User is a platform-wide person. Roles tie a user to sites.
type User struct {
	ID    string `gorm:"primaryKey"`
	Email string
	Name  string
	// Picture is a picture URL the provider set (lectern user create
	// --picture); PictureFile, the picture the person uploaded on their
	// account page ("<key>.png" or "<key>.jpg" in the upload store's
	// platform area), wins over it. With neither, claims point at the
	// generated avatar.
	Picture      string
	PictureFile  string
	PasswordHash string
	// Language is the language the person chose for pages and mail (a
	// code of package i18n), empty while they never chose one.
	Language string
	// EmailVerified: the person showed they receive mail at Email (a
	// mailed link, an accepted invitation), or an operator created the
	// account.
	EmailVerified bool
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// Roles a user can hold at a site (DESIGN §5).
const (
	RoleOwner    = "owner"
	RoleAdmin    = "admin"
	RoleLecturer = "lecturer"
	RoleStudent  = "student"
)

// IsOperatorRole reports whether role administers the site.
func IsOperatorRole(role string) bool {
	return role == RoleOwner || role == RoleAdmin || role == RoleLecturer
}

// ValidRole reports whether role is one of the four roles.
func ValidRole(role string) bool { return IsOperatorRole(role) || role == RoleStudent }

// SiteRole is one role of one user at one site.
type SiteRole struct {
	SiteID    tenant.ID `gorm:"primaryKey"`
	UserID    string    `gorm:"primaryKey"`
	Role      string    `gorm:"primaryKey"`
	CreatedAt time.Time
}

// UserSiteRoles is a user's roles at one site, with the site's name, for
// Viewer.schools.
type UserSiteRoles struct {
	SiteID tenant.ID
	Slug   string
	Name   string
	Origin string
	Roles  []string
}

// Client audiences, types and sources (DESIGN §3, §6).
const (
	AudienceOperator = "operator"
	AudienceMember   = "member"

	ClientPublic       = "public"
	ClientConfidential = "confidential"

	SourceVendor = "vendor"
	SourceDCR    = "dcr"
	SourceCIMD   = "cimd"
	SourceAdmin  = "admin"
)

// Client is a registered OAuth client. SiteID is nil for the platform-wide
// client of a vendor integration.
type Client struct {
	ID              int64 `gorm:"primaryKey;autoIncrement"`
	SiteID          *tenant.ID
	ClientID        string
	SecretHash      []byte
	Name            string
	Audience        string
	Type            string
	ApplicationType string
	RedirectURIs    []string `gorm:"column:redirect_uris;serializer:json"`
	Scopes          []string `gorm:"serializer:json"`
	Source          string
	Reviewed        bool
	CreatedBy       string
	LastUsedAt      *time.Time
	CreatedAt       time.Time
	UpdatedAt       time.Time
	// ResourceServer: an operator marked this confidential client as one of
	// the site's resource servers; it may introspect other clients' access
	// tokens (RFC 7662 §4). Other clients introspect only their own.
	ResourceServer bool
}

// VendorIntegration maps the client_name a vendor platform registers with
// to its pre-registered platform-wide client (Variant A).
type VendorIntegration struct {
	ID          int64 `gorm:"primaryKey;autoIncrement"`
	Name        string
	ClientNames []string `gorm:"serializer:json"`
	ClientID    string
	CreatedAt   time.Time
}

// CIMDHost allows Client ID Metadata Documents from a host, platform-wide
// (SiteID nil) or at one site. Reviewed hosts' clients may get write scopes.
type CIMDHost struct {
	ID        int64 `gorm:"primaryKey;autoIncrement"`
	SiteID    *tenant.ID
	Host      string
	Reviewed  bool
	CreatedAt time.Time
}

// Grant is one authorization a user gave a client at a site. Access and
// refresh tokens name it; revoking it revokes them all.
type Grant struct {
	ID         string `gorm:"primaryKey"`
	SiteID     tenant.ID
	ClientID   string
	UserID     string
	Scopes     []string `gorm:"serializer:json"`
	Resource   string
	AuthTime   time.Time
	CreatedAt  time.Time
	ExpiresAt  time.Time
	LastUsedAt time.Time
	RevokedAt  *time.Time
}

// RefreshToken is stored only as the SHA-256 of the opaque token, which is
// also its key: tokens are found by nothing else. A revocation is recorded
// on the grant only; RefreshTokenByHash reports it as the token's RevokedAt.
type RefreshToken struct {
	SiteID     tenant.ID
	GrantID    string
	TokenHash  []byte `gorm:"primaryKey"`
	ParentHash []byte
	CreatedAt  time.Time
	ExpiresAt  time.Time
	UsedAt     *time.Time
	RevokedAt  *time.Time
}

// RevokedToken records that one access token (by jti) was revoked. It is
// kept until the token would have expired.
type RevokedToken struct {
	SiteID    tenant.ID `gorm:"primaryKey"`
	JTI       string    `gorm:"column:jti;primaryKey"`
	ExpiresAt time.Time
	RevokedAt time.Time
}

// Consent remembers which scopes a user approved for a client at a site.
type Consent struct {
	SiteID    tenant.ID `gorm:"primaryKey"`
	UserID    string    `gorm:"primaryKey"`
	ClientID  string    `gorm:"primaryKey"`
	Scopes    []string  `gorm:"serializer:json"`
	CreatedAt time.Time
	UpdatedAt time.Time
}

// AuditEvent records a security-relevant action at a site.
type AuditEvent struct {
	ID        int64 `gorm:"primaryKey;autoIncrement"`
	SiteID    tenant.ID
	Actor     string
	Action    string
	Target    string
	IP        string         `gorm:"column:ip"`
	Details   map[string]any `gorm:"serializer:json"`
	CreatedAt time.Time
}
