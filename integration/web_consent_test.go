package integration

import (
	"net/url"
	"testing"

	"github.com/lectern/lectern/internal/demo"
	"github.com/lectern/lectern/internal/oauthtest"
)

// Revoking a connection forgets the remembered consent, including the
// authorization server's cached copy: connecting the app again asks again.
func TestWebRevokeForgetsConsent(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	f := newFlow(t, ts, ts.academy(), demo.MemberClientID, webMemberScopes...)
	if _, err := f.exchange(f.authorize(demo.StudentEmail, demo.StudentPassword)); err != nil {
		t.Fatal(err)
	}
	// Remembered: a second authorization skips the consent page.
	again := newFlow(t, ts, ts.academy(), demo.MemberClientID, webMemberScopes...)
	if _, err := again.exchange(again.authorize(demo.StudentEmail, demo.StudentPassword)); err != nil {
		t.Fatal(err)
	}

	student := webSignIn(t, ts, ts.academy(), demo.StudentEmail, demo.StudentPassword)
	revoke := "/account/connections/revoke?client_id=" + url.QueryEscape(demo.MemberClientID)
	student.expectPost("/account/connections/revoke", student.form(revoke, "confirm-form", nil), 303)

	// The consent page is shown again: denying it reaches the client.
	after := newFlow(t, ts, ts.academy(), demo.MemberClientID, webMemberScopes...)
	out, err := after.browser.Authorize(after.authURL(), oauthtest.Options{Email: demo.StudentEmail, Password: demo.StudentPassword, Decision: "deny"})
	if err != nil {
		t.Fatal(err)
	}
	if out.Redirect == nil || out.Redirect.Query().Get("error") != "access_denied" {
		t.Fatalf("after revoking, authorization did not ask for consent again: %+v", out)
	}
}
