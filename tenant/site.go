package tenant

import (
	"net/url"
	"strings"
	"time"
)

// ID identifies a site. It is the tenant key of every site-owned row.
type ID int64

// Variant is a site's client-registration variant (spec §Authentication 5).
type Variant string

const (
	// VariantVendor ("A") registers pre-registered vendor platforms by
	// client_name and resolves Client ID Metadata Documents.
	VariantVendor Variant = "A"
	// VariantOpen ("B") offers RFC 7591 registration to loopback clients.
	VariantOpen Variant = "B"
)

// Valid reports whether v is a known variant.
func (v Variant) Valid() bool { return v == VariantVendor || v == VariantOpen }

// Site is one course site as the request path sees it. A *Site handed out by
// the Resolver is shared between goroutines and must be treated as read-only.
type Site struct {
	ID   ID
	Slug string
	Name string
	// Origin is the canonical origin: scheme://host[:port], lower-case, no
	// default port, no trailing slash. It is the issuer and the RFC 8707
	// resource of the site.
	Origin string
	// Aliases are further hosts (host[:port]) that resolve to this site.
	Aliases []string
	Variant Variant
	// IDTokens enables id_tokens; only then does the metadata advertise
	// id_token_signing_alg_values_supported and jwks_uri.
	IDTokens bool
	// MCPConnections is the "MCP connections" beta feature.
	MCPConnections bool
	// CIMDOpen accepts Client ID Metadata Documents from any host.
	CIMDOpen bool
	// SignUp lets people create their own accounts at the sign-in page.
	SignUp bool
	// StaffMFA makes owners, admins and lecturers use a second factor in
	// the admin area and to authorize operator clients.
	StaffMFA    bool
	Description string
	Locale      string
	UpdatedAt   time.Time
	// ProviderLimits and OperatorLimits are the site's overrides of the
	// platform's limits (package limits), by name, as the hosting provider
	// and the site's operators set them. Nil: none.
	ProviderLimits, OperatorLimits map[string]int
}

// Issuer is the OAuth issuer identifier of the site (RFC 8414 §2).
func (s *Site) Issuer() string { return s.Origin }

// Resource is the RFC 8707 resource indicator of the site's protected
// resources, as its protected-resource metadata advertises it (RFC 9728).
func (s *Site) Resource() string { return s.Origin }

// URL returns the absolute URL of path at the site's origin.
func (s *Site) URL(path string) string {
	if path == "" || path[0] != '/' {
		path = "/" + path
	}
	return s.Origin + path
}

// Host returns the host[:port] of the site's origin.
func (s *Site) Host() string {
	_, host, _ := strings.Cut(s.Origin, "://")
	return host
}

// Secure reports whether the site is served over https (cookies get Secure).
func (s *Site) Secure() bool { return strings.HasPrefix(s.Origin, "https://") }

// CanonicalOrigin validates raw as an origin (scheme://host[:port] with an
// optional lone trailing "/") and returns it in canonical form: lower-case,
// default port dropped, no trailing slash. It is used both for configuring
// sites and for comparing RFC 8707 resource values (DESIGN §5).
func CanonicalOrigin(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", ErrInvalidOrigin
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return "", ErrInvalidOrigin
	}
	if u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(raw, "#") || u.Opaque != "" {
		return "", ErrInvalidOrigin
	}
	if u.Path != "" && u.Path != "/" {
		return "", ErrInvalidOrigin
	}
	host, err := CanonicalHost(u.Host, scheme)
	if err != nil {
		return "", ErrInvalidOrigin
	}
	return scheme + "://" + host, nil
}
