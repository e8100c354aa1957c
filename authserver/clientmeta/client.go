package clientmeta

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/lectern/lectern/authserver/scope"
)

// MaxClientNameLen is the longest client_name, in characters.
const MaxClientNameLen = 200

// ErrorCode is an RFC 7591 §3.2.2 registration error code. Only the two
// constants below exist.
type ErrorCode string

// Registration error codes.
const (
	InvalidClientMetadata ErrorCode = "invalid_client_metadata"
	InvalidRedirectURI    ErrorCode = "invalid_redirect_uri"
)

// MetadataError is refused client metadata (RFC 7591 §3.2.2): Code is
// InvalidClientMetadata or InvalidRedirectURI, Field names the metadata
// field at fault, and Description starts with "Field: ".
type MetadataError struct {
	Code        ErrorCode
	Field       string
	Description string
}

func (e *MetadataError) Error() string { return string(e.Code) + ": " + e.Description }

// BadMetadata returns an invalid_client_metadata refusal of field.
func BadMetadata(field, format string, args ...any) *MetadataError {
	return &MetadataError{Code: InvalidClientMetadata, Field: field, Description: field + ": " + fmt.Sprintf(format, args...)}
}

func badRedirect(format string, args ...any) *MetadataError {
	return &MetadataError{Code: InvalidRedirectURI, Field: "redirect_uris", Description: "redirect_uris: " + fmt.Sprintf(format, args...)}
}

// ClientSpec describes a client to create.
type ClientSpec struct {
	Name string
	// RedirectURIs must all be loopback http URIs when LoopbackOnly (open
	// registration); otherwise https URIs are accepted too (Policy).
	RedirectURIs []string
	LoopbackOnly bool
	// Scopes the client may request. Empty: the member default (least
	// privilege). The audience follows: any operator scope makes an
	// operator client; operator and member scopes together are refused.
	Scopes []string
	// Audience, if set, must agree with the scopes (admin-created member
	// applications pass "member").
	Audience        string
	Confidential    bool
	ApplicationType string // "native" (default for loopback) or "web"

	// Record keeping, not validated: where the client came from
	// (storage.SourceDCR, SourceAdmin, ...), whether an operator reviewed
	// it, and who created it.
	Source    string
	Reviewed  bool
	CreatedBy string
	// ResourceServer lets the client introspect other clients' access
	// tokens (RFC 7662 §4). Only operators set it, on a confidential client
	// (introspection authenticates with its secret); registration and
	// metadata documents never do.
	ResourceServer bool
}

// Client is a validated ClientSpec: the metadata to store.
type Client struct {
	Name            string
	Audience        string // scope.AudienceMember or scope.AudienceOperator
	Confidential    bool
	ApplicationType string
	RedirectURIs    []string
	Scopes          []string
}

// ValidateClient checks spec and returns the client it describes.
// Failures are *MetadataError.
func ValidateClient(spec ClientSpec) (*Client, error) {
	name, err := checkName(spec.Name)
	if err != nil {
		return nil, err
	}
	if len(spec.RedirectURIs) == 0 {
		return nil, badRedirect("at least one redirect URI is required")
	}
	if len(spec.RedirectURIs) > MaxRedirectURIs {
		return nil, badRedirect("at most %d redirect URIs are allowed", MaxRedirectURIs)
	}
	policy := Policy{LoopbackOnly: spec.LoopbackOnly}
	for _, u := range spec.RedirectURIs {
		if e := CheckRedirectURI(u, policy); e != nil {
			return nil, badRedirect("%s", e.Error())
		}
	}
	scopes, audience, err := ClientScopes(spec.Scopes)
	if err != nil {
		return nil, err
	}
	if spec.Audience != "" && spec.Audience != audience {
		return nil, BadMetadata("scope", "a %s client may only have %s scopes", spec.Audience, spec.Audience)
	}
	appType := spec.ApplicationType
	if appType == "" {
		appType = "native"
		if !spec.LoopbackOnly && !allLoopback(spec.RedirectURIs) {
			appType = "web"
		}
	}
	if appType != "native" && appType != "web" {
		return nil, BadMetadata("application_type", "must be native or web")
	}
	if spec.LoopbackOnly && appType != "native" {
		return nil, BadMetadata("application_type", "loopback redirect URIs belong to native applications")
	}
	if spec.ResourceServer && !spec.Confidential {
		return nil, BadMetadata("resource_server", "only a confidential client can be a resource server: introspection authenticates with its secret")
	}
	return &Client{
		Name: name, Audience: audience, Confidential: spec.Confidential, ApplicationType: appType,
		RedirectURIs: slices.Clone(spec.RedirectURIs), Scopes: scopes,
	}, nil
}

// checkName returns the trimmed client_name, or why it is refused: names
// are shown on the consent page, so control and bidirectional-formatting
// characters (which could make one name read as another) are refused.
func checkName(raw string) (string, error) {
	name := strings.TrimSpace(raw)
	switch {
	case name == "":
		return "", BadMetadata("client_name", "is required")
	case !utf8.ValidString(name):
		return "", BadMetadata("client_name", "must be valid UTF-8")
	case utf8.RuneCountInString(name) > MaxClientNameLen:
		return "", BadMetadata("client_name", "must have at most %d characters", MaxClientNameLen)
	case strings.IndexFunc(name, UnsafeNameRune) >= 0:
		return "", BadMetadata("client_name", "must not contain control or bidirectional-formatting characters")
	}
	return name, nil
}

// UnsafeNameRune reports runes a client name must not have: control
// characters and the bidirectional controls.
func UnsafeNameRune(r rune) bool { return unicode.IsControl(r) || bidiControl(r) }

func bidiControl(r rune) bool {
	return (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069) || r == 0x200E || r == 0x200F || r == 0x061C
}

// ClientScopes validates the scopes a client registers for and returns
// them with the audience they imply (DESIGN §6): none → the member default;
// any operator scope → operator; operator and member together are refused.
func ClientScopes(requested []string) ([]string, string, error) {
	if len(requested) == 0 {
		return scope.MemberDefault(), scope.AudienceMember, nil
	}
	var operator, member bool
	out := make([]string, 0, len(requested))
	for _, s := range requested {
		sc, ok := scope.Lookup(s)
		if !ok {
			return nil, "", BadMetadata("scope", "unknown scope %q", Truncate(s, 64))
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
		return nil, "", BadMetadata("scope", "operator scopes and account scopes cannot be registered together; register one client per audience")
	}
	if operator {
		return out, scope.AudienceOperator, nil
	}
	return out, scope.AudienceMember, nil
}
