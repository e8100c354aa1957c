package authserver

import (
	"net/http"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// clientChallenge makes a 401 answer of the token, introspection and
// revocation endpoints carry a WWW-Authenticate header when the client
// tried to authenticate in the Authorization header: RFC 6749 §5.2 says
// the server "MUST respond with an HTTP 401 status code and include the
// WWW-Authenticate response header field matching the authentication
// scheme used by the client". Clients here authenticate in the form body
// (client_secret_post or none), so such a request is always refused, and
// the challenge names the scheme it tried with the site's issuer as the
// realm; the JSON body says what to do instead. A request without the
// header gets w itself, so the token path pays nothing.
func clientChallenge(w http.ResponseWriter, r *http.Request) http.ResponseWriter {
	auth := r.Header.Get("Authorization")
	if auth == "" {
		return w
	}
	scheme, _, _ := strings.Cut(auth, " ")
	if !httpguts.ValidHeaderFieldName(scheme) || len(scheme) > 32 {
		// Not an auth-scheme, a token (RFC 9110 §11.1, the same
		// characters as a field name): a challenge for the one
		// scheme a client might mean.
		scheme = "Basic"
	}
	realm := ""
	if site := siteOf(r.Context()); site != nil {
		realm = site.Issuer()
	}
	return &challengeWriter{ResponseWriter: w, challenge: scheme + ` realm="` + realm + `"`}
}

// challengeWriter adds its challenge to a 401 answer.
type challengeWriter struct {
	http.ResponseWriter
	challenge string
}

func (c *challengeWriter) WriteHeader(status int) {
	if status == http.StatusUnauthorized && c.Header().Get("WWW-Authenticate") == "" {
		c.Header().Set("WWW-Authenticate", c.challenge)
	}
	c.ResponseWriter.WriteHeader(status)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (c *challengeWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }
