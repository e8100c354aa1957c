package bearer

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
	"github.com/lectern/lectern/vocab"
)

func TestWriteError(t *testing.T) {
	site := &tenant.Site{ID: 7, Origin: "https://academy.example.com"}
	const prm = `resource_metadata="https://academy.example.com/.well-known/oauth-protected-resource"`
	for _, tc := range []struct {
		name       string
		site       *tenant.Site
		err        error
		status     int
		header     string // WWW-Authenticate; "" means absent
		retryAfter string
		body       map[string]string
	}{
		{
			name: "no token", site: site, err: errNoTokenError(), status: 401,
			header: `Bearer ` + prm + `, error="invalid_token", error_description="no bearer token"`,
			body:   map[string]string{"error": "invalid_token", "error_description": "no bearer token"},
		},
		{
			name: "token for another origin", site: site, err: InvalidToken(descAudience), status: 401,
			header: `Bearer ` + prm + `, error="invalid_token", error_description="the access token was issued for another resource"`,
			body:   map[string]string{"error": "invalid_token", "error_description": descAudience},
		},
		{
			name: "wrapped", site: site, err: fmt.Errorf("member api: %w", InvalidToken(descExpired)), status: 401,
			header: `Bearer ` + prm + `, error="invalid_token", error_description="the access token has expired"`,
			body:   map[string]string{"error": "invalid_token", "error_description": descExpired},
		},
		{
			name: "quotes, backslashes and non-ASCII escaped", site: site, err: InvalidToken(`say "hi" \ caf` + "\u00e9\n"), status: 401,
			header: `Bearer ` + prm + `, error="invalid_token", error_description="say \"hi\" \\ caf???"`,
			body:   map[string]string{"error": "invalid_token", "error_description": `say "hi" \ caf???`},
		},
		{
			name: "no site", site: nil, err: InvalidToken("no bearer token"), status: 401,
			header: `Bearer error="invalid_token", error_description="no bearer token"`,
			body:   map[string]string{"error": "invalid_token", "error_description": "no bearer token"},
		},
		{
			name: "insufficient scope", site: site, err: (&Token{Scopes: []string{"account:read"}}).Require("account:read", "account:write"), status: 403,
			header: `Bearer error="insufficient_scope", scope="account:read account:write", ` + prm,
			body:   map[string]string{"error": "insufficient_scope", "error_description": "the access token lacks the scope account:write"},
		},
		{
			name: "unavailable", site: site, err: TemporarilyUnavailable(errors.New("redis: connection refused at 10.0.0.7")), status: 503,
			retryAfter: "5",
			body:       map[string]string{"error": "temporarily_unavailable", "error_description": "access tokens cannot be checked right now; try again shortly"},
		},
		{
			name: "any other error fails closed without detail", site: site, err: fmt.Errorf("pq: password authentication failed for user lectern: %w", storage.ErrUnavailable), status: 503,
			retryAfter: "5",
			body:       map[string]string{"error": "temporarily_unavailable", "error_description": "access tokens cannot be checked right now; try again shortly"},
		},
		{
			name: "nil error fails closed", site: site, err: nil, status: 503, retryAfter: "5",
			body: map[string]string{"error": "temporarily_unavailable", "error_description": "access tokens cannot be checked right now; try again shortly"},
		},
		{
			name: "an *Error with a status of its own fails closed", site: site, err: &Error{Status: 500, Code: "server_error", Description: "stack trace here"}, status: 503, retryAfter: "5",
			body: map[string]string{"error": "temporarily_unavailable", "error_description": "access tokens cannot be checked right now; try again shortly"},
		},
		{
			name: "no site resolved", site: nil, err: errNoSite(), status: 404,
			body: map[string]string{"error": "not_found", "error_description": "no site is served at this host"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			WriteError(w, tc.site, tc.err)
			res := w.Result()
			if res.StatusCode != tc.status {
				t.Errorf("status %d, want %d", res.StatusCode, tc.status)
			}
			if got := res.Header.Get("WWW-Authenticate"); got != tc.header {
				t.Errorf("WWW-Authenticate:\n got %s\nwant %s", got, tc.header)
			}
			if got := res.Header.Get("Retry-After"); got != tc.retryAfter {
				t.Errorf("Retry-After %q, want %q", got, tc.retryAfter)
			}
			if got := res.Header.Get("Content-Type"); got != "application/json" {
				t.Errorf("Content-Type %q", got)
			}
			if got := res.Header.Get("Cache-Control"); got != "no-store" {
				t.Errorf("Cache-Control %q", got)
			}
			var body map[string]string
			if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.body, body); d != "" {
				t.Errorf("body (-want +got):\n%s", d)
			}
		})
	}
}

func TestResourceMetadataURL(t *testing.T) {
	site := &tenant.Site{Origin: "http://localhost:8080"}
	want := "http://localhost:8080" + vocab.ProtectedResourcePath
	if got := ResourceMetadataURL(site); got != want {
		t.Errorf("ResourceMetadataURL = %q, want %q (the document discovery serves)", got, want)
	}
}

func TestRequire(t *testing.T) {
	tok := &Token{Scopes: []string{"openid", "account:read"}}
	if !tok.HasScope("account:read") || tok.HasScope("account:write") || tok.HasScope("account") {
		t.Error("HasScope is wrong")
	}
	if err := tok.Require(); err != nil {
		t.Errorf("Require() = %v", err)
	}
	if err := tok.Require("account:read", "openid"); err != nil {
		t.Errorf("Require(held scopes) = %v", err)
	}
	err := tok.Require("account:read", "account:write", "courses:read")
	e := wantStatus(t, err, http.StatusForbidden, "Require(missing scopes)")
	if e.Code != CodeInsufficientScope {
		t.Errorf("code %q", e.Code)
	}
	if e.Scope != "account:read account:write courses:read" {
		t.Errorf("Scope %q, want every scope the operation needs", e.Scope)
	}
	if e.Description != "the access token lacks the scope account:write courses:read" {
		t.Errorf("Description %q, want the missing scopes named", e.Description)
	}
	// Each call returns its own value.
	e2 := tok.Require("account:write").(*Error)
	if e2 == e || e.Scope == e2.Scope {
		t.Error("Require shares or mutates its errors")
	}
}
