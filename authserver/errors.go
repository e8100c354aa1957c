package authserver

import (
	"net/http"
	"strconv"
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/lectern/lectern/authserver/clientmeta"
	"github.com/lectern/lectern/tenant"
)

// errorCode is an OAuth 2.0 error code this server sends: RFC 6749
// §4.1.2.1 and §5.2, RFC 7591 §3.2.2, RFC 8707 §2 (invalid_target), OpenID
// Connect Core §3.1.2.6 (login_required, consent_required). It is a small
// integer, not a string, so that only the constants below exist: a
// mistyped code does not compile (a string literal is no errorCode), and
// nothing maps an unknown string to some code.
type errorCode uint8

const (
	codeInvalidRequest errorCode = iota
	codeInvalidClient
	codeInvalidGrant
	codeInvalidScope
	codeInvalidTarget
	codeUnauthorizedClient
	codeUnsupportedGrantType
	codeUnsupportedResponseType
	codeRequestNotSupported
	codeAccessDenied
	codeLoginRequired
	codeConsentRequired
	codeInvalidClientMetadata
	codeInvalidRedirectURI
	codeTemporarilyUnavailable
	codeInteractionRequired
	numErrorCodes // not a code: the count
)

// errorCodes spells each code and gives the HTTP status of a JSON answer
// with it (DESIGN §10). The codes of the authorization endpoint are
// redirected to the client (RFC 6749 §4.1.2.1) and so have no status of
// their own; they are 400 should one ever be sent as JSON. A 429 is
// temporarily_unavailable with another status (errRateLimited).
var errorCodes = [numErrorCodes]struct {
	name   string
	status int
}{
	codeInvalidRequest:          {"invalid_request", http.StatusBadRequest},
	codeInvalidClient:           {"invalid_client", http.StatusUnauthorized},
	codeInvalidGrant:            {"invalid_grant", http.StatusBadRequest},
	codeInvalidScope:            {"invalid_scope", http.StatusBadRequest},
	codeInvalidTarget:           {"invalid_target", http.StatusBadRequest},
	codeUnauthorizedClient:      {"unauthorized_client", http.StatusBadRequest},
	codeUnsupportedGrantType:    {"unsupported_grant_type", http.StatusBadRequest},
	codeUnsupportedResponseType: {"unsupported_response_type", http.StatusBadRequest},
	codeRequestNotSupported:     {"request_not_supported", http.StatusBadRequest},
	codeAccessDenied:            {"access_denied", http.StatusBadRequest},
	codeLoginRequired:           {"login_required", http.StatusBadRequest},
	codeConsentRequired:         {"consent_required", http.StatusBadRequest},
	codeInvalidClientMetadata:   {"invalid_client_metadata", http.StatusBadRequest},
	codeInvalidRedirectURI:      {"invalid_redirect_uri", http.StatusBadRequest},
	codeTemporarilyUnavailable:  {"temporarily_unavailable", http.StatusServiceUnavailable},
	codeInteractionRequired:     {"interaction_required", http.StatusBadRequest},
}

// String is the code as the RFCs spell it.
func (c errorCode) String() string { return errorCodes[c].name }

// Error is an OAuth 2.0 error answer. Each is built fresh by oauthError or
// one of the constructors below and never changed afterwards: errors are
// values, not shared state (fosite, zitadel).
type Error struct {
	code        errorCode
	description string
	// status is the HTTP status of a JSON answer: the code's, except for
	// errRateLimited.
	status int
	// retryAfter, if not 0, is sent as Retry-After with a JSON answer this
	// package writes itself (op's error writer sends no headers).
	retryAfter time.Duration
}

// oauthError returns an error with code and description, answered with the
// code's status.
func oauthError(code errorCode, description string) *Error {
	return &Error{code: code, description: description, status: errorCodes[code].status}
}

// errInvalidClient is a failed client authentication (RFC 6749 §5.2: 401).
func errInvalidClient(description string) *Error {
	return oauthError(codeInvalidClient, description)
}

// errUnavailable is a backing service being down (DESIGN §10: 503,
// temporarily_unavailable); the caller may retry shortly.
func errUnavailable(description string) *Error {
	e := oauthError(codeTemporarilyUnavailable, description)
	e.retryAfter = 5 * time.Second
	return e
}

// errRateLimited is a rate limit reached (DESIGN §10: 429 with
// Retry-After).
func errRateLimited(description string, retry time.Duration) *Error {
	e := oauthError(codeTemporarilyUnavailable, description)
	e.status, e.retryAfter = http.StatusTooManyRequests, retry
	return e
}

// metadataError is a refused registration (RFC 7591 §3.2.2).
func metadataError(e *clientmeta.MetadataError) *Error {
	code := codeInvalidClientMetadata
	if e.Code == clientmeta.InvalidRedirectURI {
		code = codeInvalidRedirectURI
	}
	return oauthError(code, e.Description)
}

// unavailableText is what a client is told when a backing service is down.
const unavailableText = "a backing service is unavailable; try again shortly"

func (e *Error) Error() string { return e.code.String() + ": " + e.description }

// As lets op's error writer send e: it looks for an op.StatusError around
// an *oidc.Error (without one it would answer server_error), and takes the
// status from the former.
func (e *Error) As(target any) bool {
	switch t := target.(type) {
	case *op.StatusError:
		*t = op.NewStatusError(e.oidc(), e.status)
		return true
	case **oidc.Error:
		*t = e.oidc()
		return true
	}
	return false
}

func (e *Error) oidc() *oidc.Error {
	o := &oidc.Error{Description: e.description}
	setString(&o.ErrorType, e.code.String())
	return o
}

// setString sets a string-kinded value whose type cannot be named here:
// oidc.Error.ErrorType is of the unexported oidc.errorType, and oidc has no
// constant for several of our codes (temporarily_unavailable,
// invalid_client_metadata, consent_required, ...).
func setString[T ~string](dst *T, s string) { *dst = T(s) }

// writeOAuthError writes e as an RFC 6749 §5.2 JSON answer with its status
// (and Retry-After when it has one).
func writeOAuthError(w http.ResponseWriter, e *Error) {
	if e.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(max(1, int(e.retryAfter.Seconds()+0.999))))
	}
	tenant.WriteError(w, e.status, e.code.String(), e.description)
}
