package storage

import (
	"time"

	"github.com/lectern/lectern/tenant"
)

// Site is the stored form of a course site (DESIGN §3).
type Site struct {
	ID                  tenant.ID      `gorm:"primaryKey;autoIncrement"`
	Slug                string         `gorm:"size:64;not null;uniqueIndex"`
	Name                string         `gorm:"size:200;not null"`
	Origin              string         `gorm:"size:300;not null;uniqueIndex"`
	Aliases             []string       `gorm:"serializer:json;type:text;not null"`
	RegistrationVariant tenant.Variant `gorm:"size:1;not null"`
	IDTokensEnabled     bool           `gorm:"not null"`
	MCPConnectionsBeta  bool           `gorm:"column:mcp_connections_beta;not null"`
	CIMDOpen            bool           `gorm:"column:cimd_open;not null"`
	Description         string         `gorm:"type:text;not null"`
	Locale              string         `gorm:"size:35;not null"`
	Settings            map[string]any `gorm:"serializer:json;type:text;not null"`
	CreatedAt           time.Time      `gorm:"not null"`
	UpdatedAt           time.Time      `gorm:"not null"`
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
		Description:    s.Description,
		Locale:         s.Locale,
		UpdatedAt:      s.UpdatedAt,
	}
}

// SiteHost maps one host (the origin's, or an alias) to its site. Host
// resolution is an indexed lookup in this table.
type SiteHost struct {
	Host   string    `gorm:"primaryKey;size:300"`
	SiteID tenant.ID `gorm:"not null;index"`
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
	ID            int64     `gorm:"primaryKey;autoIncrement"`
	SiteID        tenant.ID `gorm:"not null;uniqueIndex:site_keys_site_kid,priority:1"`
	KID           string    `gorm:"column:kid;size:64;not null;uniqueIndex:site_keys_site_kid,priority:2"`
	Alg           string    `gorm:"size:16;not null"`
	PublicJWK     string    `gorm:"column:public_jwk;type:text;not null"`
	SealedPrivate []byte    `gorm:"not null"`
	State         string    `gorm:"size:16;not null"`
	// ActivatesAt is when a "next" key starts signing (pre-publication delay).
	ActivatesAt time.Time `gorm:"not null"`
	// RetiredAt is when the key stopped signing; it stays published until
	// every token it signed has expired.
	RetiredAt *time.Time
	CreatedAt time.Time `gorm:"not null"`
}

// User is a platform-wide person. Roles tie a user to sites.
type User struct {
	ID           string    `gorm:"primaryKey;size:40"`
	Email        string    `gorm:"size:320;not null;uniqueIndex"`
	Name         string    `gorm:"size:200;not null"`
	Picture      string    `gorm:"size:1000;not null"`
	PasswordHash string    `gorm:"size:200;not null"`
	CreatedAt    time.Time `gorm:"not null"`
	UpdatedAt    time.Time `gorm:"not null"`
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
	UserID    string    `gorm:"primaryKey;size:40;index"`
	Role      string    `gorm:"primaryKey;size:16"`
	CreatedAt time.Time `gorm:"not null"`
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
	ID              int64      `gorm:"primaryKey;autoIncrement"`
	SiteID          *tenant.ID `gorm:"index"`
	ClientID        string     `gorm:"size:300;not null;index"`
	SecretHash      []byte
	Name            string   `gorm:"size:200;not null"`
	Audience        string   `gorm:"size:16;not null"`
	Type            string   `gorm:"size:16;not null"`
	ApplicationType string   `gorm:"size:16;not null"`
	RedirectURIs    []string `gorm:"column:redirect_uris;serializer:json;type:text;not null"`
	Scopes          []string `gorm:"serializer:json;type:text;not null"`
	Source          string   `gorm:"size:16;not null"`
	Reviewed        bool     `gorm:"not null"`
	CreatedBy       string   `gorm:"size:64;not null"`
	LastUsedAt      *time.Time
	CreatedAt       time.Time `gorm:"not null"`
	UpdatedAt       time.Time `gorm:"not null"`
}

// VendorIntegration maps the client_name a vendor platform registers with
// to its pre-registered platform-wide client (Variant A).
type VendorIntegration struct {
	ID          int64     `gorm:"primaryKey;autoIncrement"`
	Name        string    `gorm:"size:200;not null"`
	ClientNames []string  `gorm:"serializer:json;type:text;not null"`
	ClientID    string    `gorm:"size:300;not null;uniqueIndex"`
	CreatedAt   time.Time `gorm:"not null"`
}

// CIMDHost allows Client ID Metadata Documents from a host, platform-wide
// (SiteID nil) or at one site. Reviewed hosts' clients may get write scopes.
type CIMDHost struct {
	ID        int64      `gorm:"primaryKey;autoIncrement"`
	SiteID    *tenant.ID `gorm:"index"`
	Host      string     `gorm:"size:300;not null"`
	Reviewed  bool       `gorm:"not null"`
	CreatedAt time.Time  `gorm:"not null"`
}

// Grant is one authorization a user gave a client at a site. Access and
// refresh tokens name it; revoking it revokes them all.
type Grant struct {
	ID         string    `gorm:"primaryKey;size:40"`
	SiteID     tenant.ID `gorm:"not null;index:grants_site_user,priority:1"`
	ClientID   string    `gorm:"size:300;not null"`
	UserID     string    `gorm:"size:40;not null;index:grants_site_user,priority:2"`
	Scopes     []string  `gorm:"serializer:json;type:text;not null"`
	Resource   string    `gorm:"size:300;not null"`
	AuthTime   time.Time `gorm:"not null"`
	CreatedAt  time.Time `gorm:"not null"`
	ExpiresAt  time.Time `gorm:"not null"`
	LastUsedAt time.Time `gorm:"not null"`
	RevokedAt  *time.Time
}

// RefreshToken is stored only as the SHA-256 of the opaque token.
type RefreshToken struct {
	ID         int64     `gorm:"primaryKey;autoIncrement"`
	SiteID     tenant.ID `gorm:"not null"`
	GrantID    string    `gorm:"size:40;not null;index"`
	TokenHash  []byte    `gorm:"not null;uniqueIndex"`
	ParentHash []byte
	CreatedAt  time.Time `gorm:"not null"`
	ExpiresAt  time.Time `gorm:"not null"`
	UsedAt     *time.Time
	RevokedAt  *time.Time
}

// RevokedToken records that one access token (by jti) was revoked. It is
// kept until the token would have expired.
type RevokedToken struct {
	SiteID    tenant.ID `gorm:"primaryKey"`
	JTI       string    `gorm:"column:jti;primaryKey;size:64"`
	ExpiresAt time.Time `gorm:"not null"`
	RevokedAt time.Time `gorm:"not null"`
}

// Consent remembers which scopes a user approved for a client at a site.
type Consent struct {
	SiteID    tenant.ID `gorm:"primaryKey"`
	UserID    string    `gorm:"primaryKey;size:40"`
	ClientID  string    `gorm:"primaryKey;size:300"`
	Scopes    []string  `gorm:"serializer:json;type:text;not null"`
	CreatedAt time.Time `gorm:"not null"`
	UpdatedAt time.Time `gorm:"not null"`
}

// AuditEvent records a security-relevant action at a site.
type AuditEvent struct {
	ID        int64          `gorm:"primaryKey;autoIncrement"`
	SiteID    tenant.ID      `gorm:"not null;index:audit_site_time,priority:1"`
	Actor     string         `gorm:"size:300;not null"`
	Action    string         `gorm:"size:64;not null"`
	Target    string         `gorm:"size:300;not null"`
	IP        string         `gorm:"column:ip;size:64;not null"`
	Details   map[string]any `gorm:"serializer:json;type:text;not null"`
	CreatedAt time.Time      `gorm:"not null;index:audit_site_time,priority:2"`
}
