package bearer

import (
	"errors"
	"net/http"
	"strings"
)

// Error codes of the answers of a protected resource (RFC 6750 §3.1, and
// RFC 6749 §4.1.2.1's temporarily_unavailable for a dependency that is down).
const (
	CodeInvalidToken           = "invalid_token"
	CodeInsufficientScope      = "insufficient_scope"
	CodeTemporarilyUnavailable = "temporarily_unavailable"
)

// ErrNoToken is in the chain of the *Error returned when a request carries no
// bearer token at all (no Authorization header, or one of another scheme).
// /mcp serves such requests anonymously; /member/graphql answers them with
// the *Error itself (401 invalid_token).
var ErrNoToken = errors.New("bearer: no bearer token")

// Error is the answer of a protected resource that refuses a request:
// 401 invalid_token, 403 insufficient_scope or 503 temporarily_unavailable.
// WriteError turns it into the HTTP answer. Description is shown to the
// client and must stay ASCII and free of secrets; the cause (see Unwrap) is
// for logs only.
//
// Errors are values: the constructors return a fresh *Error each time, and
// nothing in this package keeps or mutates one after returning it.
type Error struct {
	Status      int
	Code        string
	Description string
	// Scope is the space-separated scope the request needs (403 only).
	Scope string

	cause error
}

func (e *Error) Error() string {
	s := "bearer: " + e.Code
	if e.Description != "" {
		s += ": " + e.Description
	}
	if e.cause != nil {
		s += ": " + e.cause.Error()
	}
	return s
}

// Unwrap returns the cause: ErrNoToken, or the key-source, cache or store
// error behind a 503.
func (e *Error) Unwrap() error { return e.cause }

// InvalidToken returns a 401 invalid_token error (RFC 6750 §3.1): the token
// is missing, malformed, expired, revoked, or not meant for this resource.
func InvalidToken(description string) *Error {
	return &Error{Status: http.StatusUnauthorized, Code: CodeInvalidToken, Description: description}
}

// InsufficientScope returns a 403 insufficient_scope error (RFC 6750 §3.1)
// for an operation that needs scopes. Scope lists all of them, which is what
// the operation needs (RFC 6750 §3: "the scope necessary to access the
// requested resource"); clients that re-authorize with exactly that set, and
// clients that add it to what they hold (MCP step-up), both end up with a
// token that works.
func InsufficientScope(scopes ...string) *Error {
	return &Error{
		Status:      http.StatusForbidden,
		Code:        CodeInsufficientScope,
		Description: "the access token lacks a scope this request needs",
		Scope:       strings.Join(scopes, " "),
	}
}

// TemporarilyUnavailable returns a 503 temporarily_unavailable error with
// cause (for logs) in its chain: a dependency (the site's keys, the cache
// and the database together) cannot answer, so the token can be neither
// accepted nor refused.
func TemporarilyUnavailable(cause error) *Error {
	return &Error{
		Status:      http.StatusServiceUnavailable,
		Code:        CodeTemporarilyUnavailable,
		Description: "access tokens cannot be checked right now; try again shortly",
		cause:       cause,
	}
}

// errNoSite answers a request that reached a protected resource without a
// resolved site, which the tenant middleware prevents; it matches the
// middleware's answer for an unknown host.
func errNoSite() *Error {
	return &Error{Status: http.StatusNotFound, Code: "not_found", Description: "no site is served at this host"}
}

func errNoTokenError() *Error {
	e := InvalidToken("no bearer token")
	e.cause = ErrNoToken
	return e
}
