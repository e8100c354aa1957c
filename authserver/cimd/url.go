package cimd

import (
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// MaxClientIDLength is the longest client_id URL accepted, in bytes.
const MaxClientIDLength = 2048

// IsClientIDURL reports whether client_id s is meant as a Client ID Metadata
// Document URL: it starts with "https://", parses, and has a path other than
// "" or "/". It says nothing about validity (ValidateClientIDURL does); the
// caller uses it to decide whether to try CIMD at all, so that a malformed
// CIMD URL gets a CIMD error rather than "unknown client".
func IsClientIDURL(s string) bool {
	if !strings.HasPrefix(s, "https://") {
		return false
	}
	u, err := url.Parse(s)
	if err != nil {
		return false
	}
	return u.Path != "" && u.Path != "/"
}

// ValidateClientIDURL checks that s may be a client_id URL
// (draft-ietf-oauth-client-id-metadata-document §3): https, absolute, with a
// host, without user-info, fragment or query, with a path other than "/"
// and without dot segments, at most MaxClientIDLength bytes. The port may be
// given, the default one included. IP-literal hosts pass here: the fetcher's
// dialer vets every address, literal or resolved, in one place. Errors are
// *Error.
func ValidateClientIDURL(s string) (u *url.URL, err error) {
	const what = "The client_id URL"
	if len(s) > MaxClientIDLength {
		return nil, newError(nil, what+" is longer than 2048 bytes.")
	}
	if !strings.HasPrefix(s, "https://") {
		return nil, newError(nil, what+" must start with https://.")
	}
	if i := strings.IndexFunc(s, notURLChar); i >= 0 {
		return nil, newError(nil, what+" contains a character that is not allowed in a URL.")
	}
	if strings.Contains(s, "#") {
		return nil, newError(nil, what+" must not contain a fragment.")
	}
	if strings.Contains(s, "?") {
		return nil, newError(nil, what+" must not contain a query.")
	}
	u, err = url.Parse(s)
	if err != nil {
		return nil, newError(err, what+" is not a valid URL.")
	}
	if u.User != nil {
		return nil, newError(nil, what+" must not contain a user name or password.")
	}
	if e := checkHost(u, what); e != nil {
		return nil, e
	}
	if u.Path == "" || u.Path == "/" {
		return nil, newError(nil, what+" must have a path, such as /client.json.")
	}
	// Percent-encoded dots decode to dots in u.Path, so "%2e%2e" is caught
	// as well: a server may normalise either form away.
	for seg := range strings.SplitSeq(u.Path, "/") {
		if seg == "." || seg == ".." {
			return nil, newError(nil, what+" must not contain . or .. path segments.")
		}
	}
	return u, nil
}

// notURLChar reports a rune RFC 3986 never allows in a URL: anything other
// than unreserved, reserved and '%'. Spaces, backslashes (which browsers
// read as '/'), quotes and non-ASCII are refused rather than guessed at.
func notURLChar(r rune) bool {
	switch {
	case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9':
		return false
	}
	return !strings.ContainsRune("-._~:/?#[]@!$&'()*+,;=%", r)
}

// checkHost checks the host[:port] of an absolute URL. what names the URL in
// the description.
func checkHost(u *url.URL, what string) *Error {
	host, port := u.Hostname(), u.Port()
	if host == "" {
		return newError(nil, what+" has no host.")
	}
	if strings.HasSuffix(u.Host, ":") {
		return newError(nil, what+" has an empty port.")
	}
	if port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return newError(nil, what+" has an invalid port.")
		}
	}
	if strings.HasPrefix(u.Host, "[") {
		a, err := netip.ParseAddr(host)
		if err != nil || !a.Is6() || a.Zone() != "" {
			return newError(err, what+" has an invalid IPv6 address.")
		}
		return nil
	}
	if a, err := netip.ParseAddr(host); err == nil && a.Is4() {
		return nil
	}
	if !validHostname(host) {
		return newError(nil, what+" has an invalid host name.")
	}
	return nil
}

// validHostname reports whether h is an ASCII DNS name (IDNs arrive as
// punycode) without empty labels, a trailing dot included. A name whose last
// label is numeric is refused: resolvers read "2130706433" or "0x7f.1" as
// IPv4 addresses, and such a name is never a real CIMD host.
func validHostname(h string) bool {
	if len(h) > 253 {
		return false
	}
	labels := strings.Split(h, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 {
			return false
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	last := strings.ToLower(labels[len(labels)-1])
	if strings.HasPrefix(last, "0x") || strings.Trim(last, "0123456789") == "" {
		return false
	}
	return true
}

// Host is the host[:port] of a client_id URL as Document.Host gives it:
// lower-cased, without https' default port, so that "Client.Example:443" and
// "client.example" are one host. Allowlist lookups should use it, so that
// they key on what the consent page shows.
func Host(u *url.URL) string { return canonicalHost(u) }

// canonicalHost is u's host[:port] lower-cased, with https' default port
// dropped.
func canonicalHost(u *url.URL) string {
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if port == "" || (port == "443" && u.Scheme == "https") {
		if strings.Contains(host, ":") {
			return "[" + host + "]"
		}
		return host
	}
	return net.JoinHostPort(host, port)
}
