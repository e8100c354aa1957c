package clientmeta

import (
	"net/url"
	"strings"
)

// MaxURLLen bounds client_uri, logo_uri, tos_uri and policy_uri.
const MaxURLLen = 2048

// IsHTTPSURL reports whether s may be a client_uri, logo_uri, tos_uri or
// policy_uri: an absolute https URL with a valid host, no user
// information, of the characters RFC 3986 allows, at most MaxURLLen bytes.
// Never javascript: or data:, which a page would run or render.
func IsHTTPSURL(s string) bool {
	if len(s) > MaxURLLen || !strings.HasPrefix(s, "https://") || strings.IndexFunc(s, func(r rune) bool { return !IsURIChar(r) }) >= 0 || !validEscapes(s) {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && u.Scheme == "https" && u.Opaque == "" && u.User == nil && CheckHost(u) == nil
}
