package integration

import (
	"testing"

	"golang.org/x/oauth2"

	"github.com/lectern/lectern/authserver/scope"
	"github.com/lectern/lectern/internal/demo"
)

// memberToken runs the real code flow (login and consent pages) for email
// with the site's demo-member-app and returns the tokens. Scopes default to
// openid profile email account:read account:write.
func (ts *testServer) memberToken(t *testing.T, origin, email, password string, scopes ...string) *oauth2.Token {
	t.Helper()
	if len(scopes) == 0 {
		scopes = scope.MemberDefault()
	}
	f := newFlow(t, ts, origin, demo.MemberClientID, scopes...)
	tok, err := f.exchange(f.authorize(email, password))
	if err != nil {
		t.Fatalf("member token for %s at %s: %v", email, origin, err)
	}
	return tok
}

// studentToken is the demo student's member token at origin.
func (ts *testServer) studentToken(t *testing.T, origin string, scopes ...string) *oauth2.Token {
	t.Helper()
	return ts.memberToken(t, origin, demo.StudentEmail, demo.StudentPassword, scopes...)
}

// operatorToken returns an operator token with scopes for the person at
// origin: at Demo Academy through the vendor client, at Open School through
// an operator client registered for the test (DCR). The person must hold an
// operator role that may grant the scopes.
func (ts *testServer) operatorToken(t *testing.T, origin, email, password string, scopes ...string) *oauth2.Token {
	t.Helper()
	clientID := demo.VendorClientID
	if origin == ts.open() {
		_, _, reg := ts.register(t, ts.clientFrom(nextSourceIP()), origin, "application/json",
			mustJSON(map[string]any{"client_name": "Operator test client", "redirect_uris": []string{callback}, "scope": "openid " + scope.Join(scope.OperatorScopes())}))
		id, ok := reg["client_id"].(string)
		if !ok {
			t.Fatalf("registering an operator client at %s: %v", origin, reg)
		}
		clientID = id
	}
	f := newFlow(t, ts, origin, clientID, append([]string{scope.OpenID}, scopes...)...)
	tok, err := f.exchange(f.authorize(email, password))
	if err != nil {
		t.Fatalf("operator token for %s at %s: %v", email, origin, err)
	}
	return tok
}

// ownerToken is the demo owner's operator token at origin.
func (ts *testServer) ownerToken(t *testing.T, origin string, scopes ...string) *oauth2.Token {
	t.Helper()
	return ts.operatorToken(t, origin, demo.OwnerEmail, demo.OwnerPassword, scopes...)
}

// The shared token helpers work at both sites.
func TestTokenHelpers(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	for _, origin := range []string{ts.academy(), ts.open()} {
		if tok := ts.studentToken(t, origin); tok.AccessToken == "" {
			t.Fatal("no member token")
		}
		tok := ts.ownerToken(t, origin, "courses:read", "students:read")
		claims := decodeJWTClaims(t, tok.AccessToken)
		if claims["aud"] != origin || claims["scope"] != "openid courses:read students:read" {
			t.Fatalf("operator token at %s: %v", origin, claims)
		}
	}
	_ = demo.OwnerEmail
}
