package authserver

import (
	"net"
	"net/url"
	"strings"

	"github.com/lectern/lectern/internal/platform"
)

// redirectMatches reports whether requested is one of registered. Matching is
// exact string comparison (RFC 6749 §3.1.2.3, OAuth 2.1), except that for
// loopback redirect URIs the port is ignored (RFC 8252 §7.3): native apps
// bind an ephemeral port. Scheme, host (localhost is not 127.0.0.1), path and
// query still compare exactly; a fragment never matches.
func redirectMatches(registered []string, requested string) bool {
	if requested == "" || strings.Contains(requested, "#") {
		return false
	}
	for _, r := range registered {
		if r == requested {
			return true
		}
	}
	req, ok := parseLoopback(requested)
	if !ok {
		return false
	}
	for _, r := range registered {
		reg, ok := parseLoopback(r)
		if ok && reg.host == req.host && reg.path == req.path && reg.rawQuery == req.rawQuery {
			return true
		}
	}
	return false
}

type loopbackURI struct {
	host, path, rawQuery string
}

// parseLoopback parses an http loopback redirect URI: http, a host of
// 127.0.0.1, [::1] or localhost, any (or no) port, no user-info.
func parseLoopback(raw string) (loopbackURI, bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" || u.User != nil || u.Fragment != "" || u.Opaque != "" {
		return loopbackURI{}, false
	}
	host := u.Hostname()
	if !platform.IsLoopbackHost(host) {
		return loopbackURI{}, false
	}
	if p := u.Port(); p != "" {
		if _, err := net.LookupPort("tcp", p); err != nil {
			return loopbackURI{}, false
		}
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	return loopbackURI{host: host, path: path, rawQuery: u.RawQuery}, true
}
