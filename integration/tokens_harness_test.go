package integration

import (
	"testing"

	"github.com/lectern/lectern/internal/demo"
)

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
