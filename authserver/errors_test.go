package authserver

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/lectern/lectern/authserver/clientmeta"
)

type errorBody struct {
	Error       string `json:"error"`
	Description string `json:"error_description"`
}

func decodeErrorBody(t *testing.T, rec *httptest.ResponseRecorder) errorBody {
	t.Helper()
	var b errorBody
	if err := json.Unmarshal(rec.Body.Bytes(), &b); err != nil {
		t.Fatalf("body %q: %v", rec.Body, err)
	}
	return b
}

// TestErrorCodeStatuses maps every code to the status of a JSON answer
// (DESIGN §10), and checks both ways such an answer is written: by this
// package (registration, the checks before op) and by op's error writer
// (token, revocation, introspection).
func TestErrorCodeStatuses(t *testing.T) {
	want := map[string]int{
		"invalid_request":         http.StatusBadRequest,
		"invalid_grant":           http.StatusBadRequest,
		"invalid_scope":           http.StatusBadRequest,
		"invalid_client_metadata": http.StatusBadRequest,
		"invalid_redirect_uri":    http.StatusBadRequest,
		"unsupported_grant_type":  http.StatusBadRequest,
		"invalid_target":          http.StatusBadRequest,
		"unauthorized_client":     http.StatusBadRequest,
		"invalid_client":          http.StatusUnauthorized,
		"temporarily_unavailable": http.StatusServiceUnavailable,
		// Redirected to the client by the authorization endpoint; 400
		// should one be sent as JSON.
		"unsupported_response_type": http.StatusBadRequest,
		"request_not_supported":     http.StatusBadRequest,
		"access_denied":             http.StatusBadRequest,
		"login_required":            http.StatusBadRequest,
		"consent_required":          http.StatusBadRequest,
		"interaction_required":      http.StatusBadRequest,
	}
	seen := map[string]bool{}
	for c := errorCode(0); c < numErrorCodes; c++ {
		name := c.String()
		status, ok := want[name]
		switch {
		case name == "":
			t.Fatalf("code %d has no name", c)
		case seen[name]:
			t.Fatalf("two codes are spelled %s", name)
		case !ok:
			t.Fatalf("code %s has no status in this test", name)
		}
		seen[name] = true
		t.Run(name, func(t *testing.T) {
			e := oauthError(c, "why")
			rec := httptest.NewRecorder()
			writeOAuthError(rec, e)
			if b := decodeErrorBody(t, rec); rec.Code != status || b.Error != name || b.Description != "why" {
				t.Errorf("writeOAuthError: %d %+v, want %d %s", rec.Code, b, status, name)
			}
			rec = httptest.NewRecorder()
			op.WriteError(rec, httptest.NewRequest(http.MethodPost, "/api/oauth/token", nil), e, nil)
			if b := decodeErrorBody(t, rec); rec.Code != status || b.Error != name || b.Description != "why" {
				t.Errorf("op.WriteError: %d %+v, want %d %s", rec.Code, b, status, name)
			}
		})
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("%s has no code", name)
		}
	}
}

// A rate limit is 429 with Retry-After (whole seconds, rounded up); an
// outage is 503 with Retry-After where this package writes the answer.
func TestRetryAfter(t *testing.T) {
	tests := []struct {
		name   string
		e      *Error
		status int
		retry  string
	}{
		{"rate limited", errRateLimited("slow down", 2500*time.Millisecond), http.StatusTooManyRequests, "3"},
		{"rate limited for less than a second", errRateLimited("slow down", time.Millisecond), http.StatusTooManyRequests, "1"},
		{"unavailable", errUnavailable(unavailableText), http.StatusServiceUnavailable, "5"},
		{"invalid grant", oauthError(codeInvalidGrant, "no"), http.StatusBadRequest, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			writeOAuthError(rec, tc.e)
			b := decodeErrorBody(t, rec)
			if rec.Code != tc.status || rec.Header().Get("Retry-After") != tc.retry {
				t.Fatalf("%d Retry-After %q, want %d %q", rec.Code, rec.Header().Get("Retry-After"), tc.status, tc.retry)
			}
			if tc.status != http.StatusBadRequest && b.Error != "temporarily_unavailable" {
				t.Fatalf("error %q", b.Error)
			}
		})
	}
}

// Registration refusals keep the RFC 7591 code clientmeta chose.
func TestMetadataErrorCodes(t *testing.T) {
	for _, code := range []clientmeta.ErrorCode{clientmeta.InvalidClientMetadata, clientmeta.InvalidRedirectURI} {
		e := metadataError(&clientmeta.MetadataError{Code: code, Field: "f", Description: "f: no"})
		if e.code.String() != string(code) || e.status != http.StatusBadRequest || e.description != "f: no" {
			t.Errorf("%s became %v (%d)", code, e, e.status)
		}
	}
}
