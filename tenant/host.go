package tenant

import (
	"errors"
	"strconv"
	"strings"
)

// Errors of host and origin parsing. They are values so callers can map them
// to 400 answers.
var (
	ErrInvalidHost   = errors.New("tenant: malformed host")
	ErrInvalidOrigin = errors.New("tenant: malformed origin")
)

// maxHostLen bounds a host[:port] as DNS bounds a name (RFC 1035 §2.3.4).
const maxHostLen = 255

// CanonicalHost validates a Host header value (host[:port], RFC 9110 §7.2)
// and returns it lower-cased with the scheme's default port dropped. It
// refuses, rather than repairs, anything a browser would not send: user-info,
// non-ASCII (IDNs arrive as punycode), empty labels, bad ports. A trailing
// dot is syntactically valid and kept, so such a host simply matches no site.
func CanonicalHost(hostport, scheme string) (string, error) {
	if hostport == "" || len(hostport) > maxHostLen {
		return "", ErrInvalidHost
	}
	host, port := hostport, ""
	if strings.HasPrefix(hostport, "[") {
		end := strings.IndexByte(hostport, ']')
		if end < 0 {
			return "", ErrInvalidHost
		}
		host = hostport[:end+1]
		rest := hostport[end+1:]
		if rest != "" {
			if rest[0] != ':' {
				return "", ErrInvalidHost
			}
			port = rest[1:]
			if port == "" {
				return "", ErrInvalidHost
			}
		}
		if !validIPv6Literal(host[1 : len(host)-1]) {
			return "", ErrInvalidHost
		}
	} else {
		if i := strings.LastIndexByte(hostport, ':'); i >= 0 {
			host, port = hostport[:i], hostport[i+1:]
			if port == "" {
				return "", ErrInvalidHost
			}
		}
		if !validRegName(host) {
			return "", ErrInvalidHost
		}
	}
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 || port[0] == '0' || port[0] == '+' {
			return "", ErrInvalidHost
		}
	}
	host = strings.ToLower(host)
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	if port == "" {
		return host, nil
	}
	return host + ":" + port, nil
}

// validRegName accepts DNS names and IPv4 literals: ASCII letters, digits,
// '-' and '.', no empty label except a single trailing dot.
func validRegName(h string) bool {
	if h == "" || h == "." {
		return false
	}
	labels := strings.Split(strings.TrimSuffix(h, "."), ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

func validIPv6Literal(s string) bool {
	if s == "" || strings.Count(s, ":") < 2 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' || c == ':' || c == '.') {
			return false
		}
	}
	return true
}
