package integration

import (
	"net/url"
	"testing"

	"golang.org/x/oauth2"

	"github.com/lectern/lectern/internal/demo"
	"github.com/lectern/lectern/vocab"
)

// The token and revocation endpoints' audit events carry the client's
// address like every other: a grant created, a code replayed, a refresh
// token reused, a token and a grant revoked by the client. The reuse and
// replay events are the signs of a stolen token, where the address
// matters most.
func TestTokenAuditEventsCarryTheClientIP(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, nil)
		site, _ := admSites(t, ts)
		member := func() *flow { return newFlow(t, ts, ts.academy(), demo.MemberClientID, "openid", "account:read") }

		// A code replayed.
		f := member()
		code := f.authorize(demo.StudentEmail, demo.StudentPassword)
		if _, err := f.exchange(code); err != nil {
			t.Fatal(err)
		}
		if _, err := f.exchange(code); oauthErrorCode(err) != "invalid_grant" {
			t.Fatalf("code replay: %v; want invalid_grant", err)
		}
		// A refresh token reused.
		f = member()
		tok, err := f.exchange(f.authorize(demo.StudentEmail, demo.StudentPassword))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.conf.TokenSource(f.ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token(); err != nil {
			t.Fatal(err)
		}
		if _, err := f.conf.TokenSource(f.ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token(); oauthErrorCode(err) != "invalid_grant" {
			t.Fatalf("refresh token reuse: %v; want invalid_grant", err)
		}
		// An access token and a refresh token revoked by the client.
		f = member()
		tok, err = f.exchange(f.authorize(demo.StudentEmail, demo.StudentPassword))
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []string{tok.AccessToken, tok.RefreshToken} {
			if status, _, body := ts.postForm(t, f.origin+vocab.RevocationPath, url.Values{"token": {v}, "client_id": {demo.MemberClientID}}); status != 200 {
				t.Fatalf("revocation: %d %v", status, body)
			}
		}

		seen := map[string]int{}
		for _, e := range admAudit(t, ts, *site) {
			switch e.Action {
			case "grant.created", "grant.revoked", "token.revoked":
			default:
				continue
			}
			key := e.Action
			if r, ok := e.Details["reason"].(string); ok {
				key += " (" + r + ")"
			}
			seen[key]++
			if e.IP != "127.0.0.1" {
				t.Errorf("%s: ip %q; want the client's, 127.0.0.1", key, e.IP)
			}
		}
		for _, want := range []string{"grant.created", "grant.revoked (authorization code replayed)", "grant.revoked (refresh token reused)",
			"token.revoked", "grant.revoked (refresh token revoked by the client)"} {
			if seen[want] == 0 {
				t.Errorf("no %s event among %v", want, seen)
			}
		}
	})
}
