package platform

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/lectern/lectern/authserver/scope"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// MetadataError is a refused client registration (RFC 7591 §3.2.2): Code is
// invalid_client_metadata or invalid_redirect_uri, Field names what is wrong.
type MetadataError struct {
	Code        string
	Field       string
	Description string
}

func (e *MetadataError) Error() string { return e.Code + ": " + e.Description }

func badMetadata(field, format string, args ...any) *MetadataError {
	return &MetadataError{Code: "invalid_client_metadata", Field: field, Description: field + ": " + fmt.Sprintf(format, args...)}
}

func badRedirect(format string, args ...any) *MetadataError {
	return &MetadataError{Code: "invalid_redirect_uri", Field: "redirect_uris", Description: "redirect_uris: " + fmt.Sprintf(format, args...)}
}

// Limits on client metadata.
const (
	MaxRedirectURIs   = 10
	MaxRedirectURILen = 2000
	MaxClientNameLen  = 200
)

// ClientSpec describes a client to create.
type ClientSpec struct {
	Site tenant.ID
	Name string
	// RedirectURIs must all be loopback http URIs when LoopbackOnly (open
	// registration); otherwise https URIs are accepted too.
	RedirectURIs []string
	LoopbackOnly bool
	// Scopes the client may request. Empty: the member default (least
	// privilege). The audience follows: any operator scope makes an operator
	// client; operator and member scopes together are refused.
	Scopes []string
	// Audience, if set, must agree with the scopes (admin-created member
	// applications pass "member").
	Audience        string
	Confidential    bool
	ApplicationType string // "native" (default for loopback) or "web"
	Source          string // storage.SourceDCR, SourceAdmin
	Reviewed        bool
	CreatedBy       string
}

// CreateClient validates spec and stores the client. For a confidential
// client it returns the secret, which is shown once and stored only as a
// SHA-256 hash. Validation failures are *MetadataError.
func (p *Platform) CreateClient(ctx context.Context, spec ClientSpec) (*storage.Client, string, error) {
	c, err := ValidateClient(spec)
	if err != nil {
		return nil, "", err
	}
	c.ClientID = newClientID()
	var secret string
	if spec.Confidential {
		secret = NewClientSecret()
		sum := sha256.Sum256([]byte(secret))
		c.SecretHash = sum[:]
	}
	if err := p.Store.CreateClient(ctx, c); err != nil {
		return nil, "", err
	}
	return c, secret, nil
}

// ValidateClient checks spec and returns the client it describes (without
// an ID or secret).
func ValidateClient(spec ClientSpec) (*storage.Client, error) {
	name := strings.TrimSpace(spec.Name)
	if name == "" {
		return nil, badMetadata("client_name", "is required")
	}
	if !utf8.ValidString(name) {
		return nil, badMetadata("client_name", "must be valid UTF-8")
	}
	if utf8.RuneCountInString(name) > MaxClientNameLen {
		return nil, badMetadata("client_name", "must have at most %d characters", MaxClientNameLen)
	}
	if strings.IndexFunc(name, func(r rune) bool { return unicode.IsControl(r) || bidiControl(r) }) >= 0 {
		return nil, badMetadata("client_name", "must not contain control or bidirectional-formatting characters")
	}
	if len(spec.RedirectURIs) == 0 {
		return nil, badRedirect("at least one redirect URI is required")
	}
	if len(spec.RedirectURIs) > MaxRedirectURIs {
		return nil, badRedirect("at most %d redirect URIs are allowed", MaxRedirectURIs)
	}
	for _, u := range spec.RedirectURIs {
		if err := checkRedirectURI(u, spec.LoopbackOnly); err != nil {
			return nil, err
		}
	}
	scopes, audience, err := ClientScopes(spec.Scopes)
	if err != nil {
		return nil, err
	}
	if spec.Audience != "" && spec.Audience != audience {
		return nil, badMetadata("scope", "a %s client may only have %s scopes", spec.Audience, spec.Audience)
	}
	appType := spec.ApplicationType
	if appType == "" {
		appType = "native"
		if !spec.LoopbackOnly && !allLoopback(spec.RedirectURIs) {
			appType = "web"
		}
	}
	if appType != "native" && appType != "web" {
		return nil, badMetadata("application_type", "must be native or web")
	}
	if spec.LoopbackOnly && appType != "native" {
		return nil, badMetadata("application_type", "loopback redirect URIs belong to native applications")
	}
	typ := storage.ClientPublic
	if spec.Confidential {
		typ = storage.ClientConfidential
	}
	site := spec.Site
	return &storage.Client{
		SiteID: &site, Name: name, Audience: audience, Type: typ, ApplicationType: appType,
		RedirectURIs: slices.Clone(spec.RedirectURIs), Scopes: scopes, Source: spec.Source,
		Reviewed: spec.Reviewed, CreatedBy: spec.CreatedBy,
	}, nil
}

// ClientScopes validates the scopes a client registers for and returns
// them with the audience they imply (DESIGN §6): none → the member default;
// any operator scope → operator; operator and member together are refused.
func ClientScopes(requested []string) ([]string, string, error) {
	if len(requested) == 0 {
		return scope.MemberDefault(), storage.AudienceMember, nil
	}
	var operator, member bool
	out := make([]string, 0, len(requested))
	for _, s := range requested {
		sc, ok := scope.Lookup(s)
		if !ok {
			return nil, "", badMetadata("scope", "unknown scope %q", Truncate(s, 64))
		}
		switch sc.Audience {
		case scope.AudienceOperator:
			operator = true
		case scope.AudienceMember:
			member = true
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	if operator && member {
		return nil, "", badMetadata("scope", "operator scopes and account scopes cannot be registered together; register one client per audience")
	}
	if operator {
		return out, storage.AudienceOperator, nil
	}
	return out, storage.AudienceMember, nil
}

// checkRedirectURI applies the registration rules to one redirect URI.
func checkRedirectURI(raw string, loopbackOnly bool) error {
	if len(raw) > MaxRedirectURILen {
		return badRedirect("a redirect URI is longer than %d characters", MaxRedirectURILen)
	}
	if strings.IndexFunc(raw, func(r rune) bool { return r <= ' ' || r >= 0x7f }) >= 0 {
		// RFC 3986 URIs are ASCII; anything else must be percent-encoded.
		return badRedirect("%q contains white space, control or non-ASCII characters (percent-encode them)", Truncate(raw, 80))
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Opaque != "" {
		return badRedirect("%q is not an absolute URI", Truncate(raw, 80))
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return badRedirect("%q has a fragment; redirect URIs must not (RFC 6749 §3.1.2)", Truncate(raw, 80))
	}
	if u.User != nil {
		return badRedirect("%q has user information", Truncate(raw, 80))
	}
	switch u.Scheme {
	case "http":
		if !IsLoopbackHost(u.Hostname()) {
			return badRedirect("%q: plain http is allowed only for loopback addresses (127.0.0.1, [::1], localhost)", Truncate(raw, 80))
		}
		if p := u.Port(); p != "" {
			if _, err := net.LookupPort("tcp", p); err != nil {
				return badRedirect("%q has an invalid port", Truncate(raw, 80))
			}
		}
		return nil
	case "https":
		if loopbackOnly {
			return badRedirect("%q: this site registers only loopback redirect URIs (http://127.0.0.1:PORT/...); an https callback needs a client registered by the site's operators or a Client ID Metadata Document", Truncate(raw, 80))
		}
		if u.Host == "" {
			return badRedirect("%q has no host", Truncate(raw, 80))
		}
		return nil
	default:
		if loopbackOnly {
			return badRedirect("%q: the %s: scheme is not allowed; this site registers only loopback http redirect URIs", Truncate(raw, 80), u.Scheme)
		}
		return badRedirect("%q: the %s: scheme is not allowed; use https or a loopback http URI", Truncate(raw, 80), u.Scheme)
	}
}

// IsLoopbackHost reports whether host names the local machine in the
// forms RFC 8252 §7.3 and real MCP clients use.
func IsLoopbackHost(host string) bool {
	return host == "127.0.0.1" || host == "::1" || host == "localhost"
}

func allLoopback(uris []string) bool {
	for _, raw := range uris {
		u, err := url.Parse(raw)
		if err != nil || u.Scheme != "http" || !IsLoopbackHost(u.Hostname()) {
			return false
		}
	}
	return true
}

func bidiControl(r rune) bool {
	return (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069) || r == 0x200E || r == 0x200F || r == 0x061C
}

// Truncate shortens s to n bytes for messages, marking the cut.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// newClientID returns a random client ID ("lct_" and 22 characters).
func newClientID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "lct_" + base64.RawURLEncoding.EncodeToString(b[:])
}

// NewClientSecret returns a 256-bit random client secret.
func NewClientSecret() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return "lcs_" + base64.RawURLEncoding.EncodeToString(b[:])
}

// MatchVendorName reports whether a registration's client_name names the
// integration: exact after trimming and ASCII case folding. Deliberately no
// Unicode folding (strings.EqualFold equates "ſ" and "s", "K" and the Kelvin
// sign), no fuzzy matching, and no bidi or invisible characters.
func MatchVendorName(v *storage.VendorIntegration, clientName string) bool {
	n := strings.TrimSpace(clientName)
	if n == "" || strings.IndexFunc(n, func(r rune) bool { return unicode.IsControl(r) || bidiControl(r) || r == 0x200B || r == 0xFEFF }) >= 0 {
		return false
	}
	for _, candidate := range append([]string{v.Name}, v.ClientNames...) {
		if asciiFold(strings.TrimSpace(candidate)) == asciiFold(n) {
			return true
		}
	}
	return false
}

func asciiFold(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// AddVendor registers a vendor platform: the integration and its
// platform-wide public operator client (Variant A sites match its
// client_name at registration).
func (p *Platform) AddVendor(ctx context.Context, name string, clientNames, redirectURIs []string, scopes []string) (*storage.VendorIntegration, *storage.Client, error) {
	spec := ClientSpec{Name: name, RedirectURIs: redirectURIs, Scopes: scopes, Source: storage.SourceVendor, Reviewed: true, CreatedBy: "lectern vendor add"}
	if len(scopes) == 0 {
		spec.Scopes = append([]string{scope.OpenID, scope.Profile, scope.Email}, scope.OperatorScopes()...)
	}
	c, err := ValidateClient(spec)
	if err != nil {
		return nil, nil, err
	}
	if c.Audience != storage.AudienceOperator {
		return nil, nil, badMetadata("scope", "vendor platforms are operator clients; give operator scopes")
	}
	c.SiteID = nil
	if len(clientNames) == 0 {
		clientNames = []string{name}
	}
	v := &storage.VendorIntegration{Name: c.Name, ClientNames: clientNames, ClientID: "vnd_" + newClientID()[4:]}
	if err := p.Store.CreateVendorIntegration(ctx, v, c); err != nil {
		return nil, nil, err
	}
	return v, c, nil
}

// PurgeUnusedClients deletes clients registered by dynamic registration
// that were never used (no authorization completed) within maxAge: abandoned
// registrations should not pile up (docs/decisions.md).
func (p *Platform) PurgeUnusedClients(ctx context.Context, now time.Time, maxAge time.Duration) (int64, error) {
	return p.Store.PurgeUnusedClients(ctx, storage.SourceDCR, now.Add(-maxAge))
}

// AllowCIMDHost accepts Client ID Metadata Documents from host at the site
// named by siteRef (slug; "" for every site).
func (p *Platform) AllowCIMDHost(ctx context.Context, host, siteRef string, reviewed bool) (*storage.CIMDHost, error) {
	h, err := tenant.CanonicalHost(strings.ToLower(strings.TrimSpace(host)), "https")
	if err != nil {
		return nil, fmt.Errorf("%w: --host %q must be host[:port]", ErrInvalid, host)
	}
	entry := &storage.CIMDHost{Host: h, Reviewed: reviewed}
	if siteRef != "" {
		s, err := p.Store.SiteBySlug(ctx, siteRef)
		if err != nil {
			return nil, fmt.Errorf("site %q: %w", siteRef, err)
		}
		entry.SiteID = &s.ID
	}
	if err := p.Store.AllowCIMDHost(ctx, entry); err != nil {
		return nil, err
	}
	return entry, nil
}
