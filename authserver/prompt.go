package authserver

import (
	"strconv"
	"strings"
	"time"

	"github.com/lectern/lectern/session"
)

// prompts is the authorization request's prompt parameter (OpenID Connect
// Core §3.1.2.1): a space-delimited list. select_account is read as login:
// a browser holds one session per site, and the sign-in form is where a
// person chooses the account.
type prompts struct {
	none, login, consent bool
}

// parsePrompt reads the prompt parameter, or returns why it is invalid.
// Unknown values are refused rather than ignored, and none must stand
// alone (§3.1.2.1: with any other value it is an error).
func parsePrompt(v string) (prompts, string) {
	var p prompts
	values := strings.Fields(v)
	for _, name := range values {
		switch name {
		case "none":
			p.none = true
		case "login", "select_account":
			p.login = true
		case "consent":
			p.consent = true
		default:
			return prompts{}, "prompt may list login, consent and select_account, or be none alone; " + quoteScope(name) + " is not supported"
		}
	}
	if p.none && len(values) > 1 {
		return prompts{}, "prompt=none cannot be combined with other values"
	}
	return p, ""
}

// pending is what the pending request keeps of p: login is done by the
// sign-in the request goes to next (and authRequest.StaleAuth keeps the
// session it refused from coming back), so only none or consent remain.
func (p prompts) pending() string {
	switch {
	case p.none:
		return "none"
	case p.consent:
		return "consent"
	}
	return ""
}

// maxMaxAge is the largest max_age that counts: a century, longer than any
// session lives, and small enough to be a time.Duration.
const maxMaxAge = 100 * 365 * 24 * 60 * 60

// parseMaxAge reads max_age (OpenID Connect Core §3.1.2.1): the seconds
// since the person last actively authenticated beyond which they must
// sign in again. It returns -1 when absent, or why it is invalid. A larger
// value than maxMaxAge, however many digits, is valid and read as
// maxMaxAge.
func parseMaxAge(v string, present bool) (int64, string) {
	if !present {
		return -1, ""
	}
	if v == "" || len(v) > 64 || strings.TrimLeft(v, "0123456789") != "" {
		return 0, "max_age must be a non-negative integer number of seconds"
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n > maxMaxAge {
		return maxMaxAge, "" // out of range: the digits were checked above
	}
	return n, ""
}

// tooOld reports whether sess authenticated more than maxAge seconds
// before now (maxAge -1: no max_age).
func tooOld(sess *session.Session, maxAge int64, now time.Time) bool {
	return maxAge >= 0 && now.Sub(sess.AuthTime) > time.Duration(maxAge)*time.Second
}

// staleAuth is what a request that refused sess keeps of it
// (authRequest.StaleAuth): its authentication time, never 0.
func staleAuth(sess *session.Session) int64 {
	return max(sess.AuthTime.UnixNano(), 1)
}

// continues reports whether sess may continue ar: any session, unless ar
// refused one, then only a session signed in after that one.
func continues(sess *session.Session, ar *authRequest) bool {
	return ar.StaleAuth == 0 || sess.AuthTime.UnixNano() > ar.StaleAuth
}
