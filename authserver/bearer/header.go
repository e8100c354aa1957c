package bearer

import (
	"net/http"
	"strings"
)

// TokenFromHeader returns the bearer token of the Authorization header
// (RFC 6750 §2.1): exactly one header whose value is the scheme "Bearer"
// (case-insensitive, RFC 9110 §11.1), one or more spaces and a b64token.
//
// A request without an Authorization header, or with one of another scheme
// ("Basic ...") or an empty one, has no bearer token: the *Error (401 invalid_token) wraps
// ErrNoToken, so that /mcp can serve it anonymously. A Bearer credential that
// is malformed, or more than one Authorization header, is a plain 401
// invalid_token. Tokens in the query string or the body (RFC 6750 §2.2, §2.3)
// are never looked at: they end up in logs and caches.
func TokenFromHeader(h http.Header) (string, error) {
	vals := h.Values("Authorization")
	switch len(vals) {
	case 0:
		return "", errNoTokenError()
	case 1:
	default:
		return "", InvalidToken("the request has more than one Authorization header")
	}
	v := vals[0]
	scheme, rest, _ := strings.Cut(v, " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", errNoTokenError()
	}
	token := strings.TrimLeft(rest, " ")
	if !isB64Token(token) {
		return "", InvalidToken("the Authorization header is not a valid Bearer credential")
	}
	return token, nil
}

// isB64Token reports whether s matches RFC 6750 §2.1's
// b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=".
func isB64Token(s string) bool {
	i := 0
	for i < len(s) && isB64TokenChar(s[i]) {
		i++
	}
	if i == 0 {
		return false
	}
	for i < len(s) && s[i] == '=' {
		i++
	}
	return i == len(s)
}

func isB64TokenChar(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/'
}
