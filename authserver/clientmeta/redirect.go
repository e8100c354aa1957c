package clientmeta

import (
	"net/url"
	"slices"
	"strings"
)

// Limits on redirect URIs.
const (
	MaxRedirectURIs   = 10
	MaxRedirectURILen = 2000
)

// Policy says which redirect URIs a kind of client may register. The zero
// Policy is that of a client the site's operators create (admin area,
// admin API, `lectern client create`) and of vendor platforms: https on
// any host, or loopback http.
type Policy struct {
	// LoopbackOnly allows loopback http URIs only: open registration
	// (Variant B, DESIGN §6), where anyone may register.
	LoopbackOnly bool
	// DocumentHost, if set, is the only host an https URI may name, in
	// CanonicalHost form: a Client ID Metadata Document's redirect URIs are
	// under the document's host or loopback.
	DocumentHost string
}

// CheckRedirectURI applies the redirect-URI rules of policy p to raw and
// returns nil or what is wrong. Every policy requires: at most
// MaxRedirectURILen bytes of the characters RFC 3986 allows (so ASCII;
// an IDN host is punycode), well-formed percent-encoding, an absolute URI
// with a host, no fragment (RFC 6749 §3.1.2) and no user information, a
// lower-case http or https scheme, a valid host and, if given, a port from
// 1 to 65535, and no . or .. path segments (a browser would resolve them,
// so the URI would not say where the code goes). http is for loopback
// hosts only (RFC 8252 §7.3, §8.3).
func CheckRedirectURI(raw string, p Policy) *URIError {
	fail := func(r reason) *URIError { return &URIError{URI: raw, reason: r, loopbackOnly: p.LoopbackOnly} }
	switch {
	case raw == "":
		return fail(malformed)
	case len(raw) > MaxRedirectURILen:
		return fail(tooLong)
	case strings.IndexFunc(raw, func(r rune) bool { return !IsURIChar(r) }) >= 0:
		return fail(badChar)
	case !validEscapes(raw):
		return fail(badEscape)
	case strings.Contains(raw, "#"):
		return fail(hasFragment)
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return fail(malformed)
	case !u.IsAbs() || u.Opaque != "" || u.Host == "":
		return fail(notAbsolute)
	case u.User != nil:
		return fail(hasUserInfo)
	case !strings.HasPrefix(raw, u.Scheme+":"): // url.Parse lower-cases the scheme
		return fail(upperScheme)
	case u.Scheme != "http" && u.Scheme != "https":
		e := fail(badScheme)
		e.scheme = u.Scheme
		return e
	}
	if e := CheckHost(u); e != nil {
		e.URI, e.loopbackOnly = raw, p.LoopbackOnly
		return e
	}
	if hasDotSegment(u.Path) {
		return fail(dotSegment)
	}
	if u.Scheme == "http" {
		if !IsLoopbackHost(u.Hostname()) {
			return fail(httpNotLoopback)
		}
		return nil
	}
	switch {
	case p.LoopbackOnly:
		return fail(httpsRefused)
	case p.DocumentHost != "" && CanonicalHost(u) != p.DocumentHost:
		return fail(otherHost)
	}
	return nil
}

// hasDotSegment reports whether a (decoded) path has a . or .. segment;
// decoding first catches "%2e%2e" too, which servers normalise alike.
func hasDotSegment(path string) bool {
	for seg := range strings.SplitSeq(path, "/") {
		if seg == "." || seg == ".." {
			return true
		}
	}
	return false
}

// MatchRedirectURI reports whether requested, the redirect_uri of an
// authorization request, may be used with a client that registered
// registered. Matching is exact string comparison (RFC 6749 §3.1.2.3,
// OAuth 2.1), except that for loopback http URIs the port is ignored (RFC
// 8252 §7.3): native apps bind an ephemeral port. Scheme, host (localhost
// is not 127.0.0.1), path and query still compare exactly. requested must
// itself pass CheckRedirectURI (the operators' policy, the widest), so a
// fragment, port 0 or an empty port never match, whatever was stored.
func MatchRedirectURI(registered []string, requested string) bool {
	if CheckRedirectURI(requested, Policy{}) != nil {
		return false
	}
	if slices.Contains(registered, requested) {
		return true
	}
	req, ok := parseLoopback(requested)
	if !ok {
		return false
	}
	for _, r := range registered {
		if reg, ok := parseLoopback(r); ok && reg == req {
			return true
		}
	}
	return false
}

// loopbackURI is what of a loopback redirect URI must match: everything
// but the port.
type loopbackURI struct {
	host, path, query string
	hasQuery          bool // "?" alone is a query too: the strings differ
}

// parseLoopback parses an http loopback URI (any or no port).
func parseLoopback(raw string) (loopbackURI, bool) {
	if !strings.HasPrefix(raw, "http://") || strings.Contains(raw, "#") {
		return loopbackURI{}, false
	}
	u, err := url.Parse(raw)
	if err != nil || u.User != nil || u.Opaque != "" || !IsLoopbackHost(u.Hostname()) {
		return loopbackURI{}, false
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/" // RFC 3986 §6.2.3: the same resource
	}
	return loopbackURI{host: u.Hostname(), path: path, query: u.RawQuery, hasQuery: u.ForceQuery || u.RawQuery != ""}, true
}

// allLoopback reports whether every URI of uris is a loopback http URI.
func allLoopback(uris []string) bool {
	for _, raw := range uris {
		if _, ok := parseLoopback(raw); !ok {
			return false
		}
	}
	return true
}
