package authserver

import (
	"net/http"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// Error codes the oidc package has no constructor for.
const (
	codeInvalidTarget          = "invalid_target"
	codeTemporarilyUnavailable = "temporarily_unavailable"
	codeUnsupportedResponse    = "unsupported_response_type"
	codeConsentRequired        = "consent_required"
)

// oauthErr returns a fresh RFC 6749 §5.2 error value (never shared state).
func oauthErr(code, description string) *oidc.Error {
	e := &oidc.Error{Description: description}
	switch code {
	case "invalid_request":
		e.ErrorType = oidc.InvalidRequest
	case "invalid_scope":
		e.ErrorType = oidc.InvalidScope
	case "invalid_client":
		e.ErrorType = oidc.InvalidClient
	case "invalid_grant":
		e.ErrorType = oidc.InvalidGrant
	case "unauthorized_client":
		e.ErrorType = oidc.UnauthorizedClient
	case "unsupported_grant_type":
		e.ErrorType = oidc.UnsupportedGrantType
	case "access_denied":
		e.ErrorType = oidc.AccessDenied
	case "login_required":
		e.ErrorType = oidc.LoginRequired
	case codeInvalidTarget:
		e.ErrorType = oidc.InvalidTarget
	case "server_error":
		e.ErrorType = oidc.ServerError
	case codeTemporarilyUnavailable:
		e.ErrorType = "temporarily_unavailable"
	case codeUnsupportedResponse:
		e.ErrorType = "unsupported_response_type"
	case codeConsentRequired:
		e.ErrorType = "consent_required"
	default:
		e.ErrorType = oidc.InvalidRequest
	}
	return e
}

// withStatus attaches an HTTP status for op's error writer (invalid_client
// is 401 per RFC 6749 §5.2; a storage outage is 503, DESIGN §10).
func withStatus(e *oidc.Error, status int) error { return op.NewStatusError(e, status) }

func errInvalidClient(desc string) error {
	return withStatus(oauthErr("invalid_client", desc), http.StatusUnauthorized)
}

func errUnavailable() error {
	return withStatus(oauthErr(codeTemporarilyUnavailable, "a backing service is unavailable; try again shortly"), http.StatusServiceUnavailable)
}
