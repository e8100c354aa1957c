package clientmeta

import (
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// IsLoopbackHost reports whether host (as url.URL.Hostname gives it) names
// the local machine in the forms RFC 8252 §7.3 and real MCP clients use.
// The comparison is exact: "LOCALHOST", "127.0.0.2" and "::ffff:127.0.0.1"
// are not loopback here, so that one registered form cannot be reached
// through another spelling.
func IsLoopbackHost(host string) bool {
	return host == "127.0.0.1" || host == "::1" || host == "localhost"
}

// IsURIChar reports whether RFC 3986 allows r anywhere in a URI: the
// unreserved and reserved characters and '%'. Spaces, backslashes (which
// browsers read as '/'), quotes, angle brackets and non-ASCII are refused
// rather than guessed at; an IDN host arrives as punycode.
func IsURIChar(r rune) bool {
	switch {
	case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9':
		return true
	}
	return strings.ContainsRune("-._~:/?#[]@!$&'()*+,;=%", r)
}

// validEscapes reports whether every '%' in s starts a two-hex-digit
// escape. url.Parse checks this in the path and host but not in the
// query, which a redirect URI may have.
func validEscapes(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			continue
		}
		if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
			return false
		}
		i += 2
	}
	return true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// CheckHost checks the host[:port] of an absolute URL: a host, no empty
// port and a port from 1 to 65535 when one is given, an IPv6 literal
// without a zone, a dotted IPv4 address, or an ASCII DNS name. It returns
// nil or a *URIError whose Phrase says what is wrong.
func CheckHost(u *url.URL) *URIError {
	fail := func(r reason) *URIError { return &URIError{URI: u.String(), reason: r} }
	host, port := u.Hostname(), u.Port()
	if host == "" {
		return fail(noHost)
	}
	if strings.HasSuffix(u.Host, ":") {
		return fail(emptyPort)
	}
	if port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return fail(badPort)
		}
	}
	if strings.HasPrefix(u.Host, "[") {
		a, err := netip.ParseAddr(host)
		if err != nil || !a.Is6() || a.Zone() != "" {
			return fail(badIPv6)
		}
		return nil
	}
	if a, err := netip.ParseAddr(host); err == nil && a.Is4() {
		return nil
	}
	if !validHostname(host) {
		return fail(badHostName)
	}
	return nil
}

// validHostname reports whether h is an ASCII DNS name (IDNs arrive as
// punycode) without empty labels, a trailing dot included. A name whose
// last label is numeric is refused: resolvers read "2130706433" or "0x7f.1"
// as IPv4 addresses, and such a name is never a real client's host.
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

// CanonicalHost is u's host[:port] lower-cased, without https' default
// port, so that "Client.Example:443" and "client.example" are one host:
// what an operator allowlists, what the consent page shows, and what a
// document's https redirect URIs are compared with.
func CanonicalHost(u *url.URL) string {
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if port == "" || (port == "443" && u.Scheme == "https") {
		if strings.Contains(host, ":") {
			return "[" + host + "]"
		}
		return host
	}
	return net.JoinHostPort(host, port)
}
