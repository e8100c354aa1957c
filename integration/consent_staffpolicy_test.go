package integration

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/lectern/lectern/internal/demo"
	"github.com/lectern/lectern/internal/oauthtest"
)

// "Staff must use a second factor" holds at every door to a code, not only
// on the way through the authorization endpoint: a lecturer sent to enrol
// who opens the consent page directly, or posts its form, gets no code and
// is sent to enrol again (audit P, finding 1). After enrolling, the same
// request continues to a code.
func TestConsentKeepsStaffSecondFactor(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, nil)
		academy := ts.academy()
		c := admOwner(t, ts, academy)
		c.do(http.MethodPatch, "/school", map[string]any{"accounts": map[string]any{"staffSecondFactor": true}}, http.StatusOK)

		f := newFlow(t, ts, academy, demo.VendorClientID, "openid", "courses:read")
		out, err := f.browser.Authorize(f.authURL(), oauthtest.Options{Email: demo.LecturerEmail, Password: demo.LecturerPassword})
		if err != nil {
			t.Fatal(err)
		}
		if out.Page == nil || out.Page.URL.Path != "/account/security" || !strings.Contains(out.Page.Body, `id="factor-required"`) {
			t.Fatalf("a lecturer without a factor authorizing an operator client ended at %+v", out)
		}
		cont := regexp.MustCompile(`href="([^"]+)" id="continue-link"`).FindStringSubmatch(out.Page.Body)
		if cont == nil {
			t.Fatalf("no continue link:\n%s", webExcerpt(out.Page.Body))
		}
		next, err := url.Parse(strings.ReplaceAll(cont[1], "&amp;", "&"))
		if err != nil {
			t.Fatal(err)
		}
		id := next.Query().Get("auth_request")
		if id == "" {
			t.Fatalf("the continue link %q names no request", cont[1])
		}
		lecturer := &webPerson{t: t, ts: ts, origin: academy, b: f.browser}

		// refused: the answer sends the person to enrol, within the site,
		// with no code for the client.
		refused := func(what string, res *oauthtest.Page) {
			t.Helper()
			loc := res.Header.Get("Location")
			if res.Status != http.StatusFound || !strings.HasPrefix(loc, "/account/security?required=1") {
				t.Fatalf("%s: %d to %q; want the enrolment page\n%s", what, res.Status, loc, webExcerpt(res.Body))
			}
			if strings.Contains(loc, "code=") || strings.Contains(res.Body, "consent-form") {
				t.Fatalf("%s: a code or the consent form: %q", what, loc)
			}
		}
		refused("GET /consent without the second factor", lecturer.get("/consent?auth_request="+url.QueryEscape(id)))
		csrf := lecturer.csrf()
		refused("POST /consent approve without the second factor", lecturer.post("/consent",
			url.Values{"auth_request": {id}, "csrf_token": {csrf}, "decision": {"approve"}}))
		// The request is still pending (the refusal did not use it up),
		// and another approval is refused the same way.
		refused("POST /consent approve again", lecturer.post("/consent",
			url.Values{"auth_request": {id}, "csrf_token": {csrf}, "decision": {"approve"}}))

		// The legitimate way: enrol, continue, consent, a code with mfa.
		enrolTOTP(t, lecturer, demo.LecturerPassword)
		out, err = f.browser.Authorize(academy+next.String(), oauthtest.Options{})
		if err != nil {
			t.Fatal(err)
		}
		code, err := out.Code()
		if err != nil {
			t.Fatalf("continuing after enrolment: %v", err)
		}
		tok, err := f.exchange(code)
		if err != nil {
			t.Fatal(err)
		}
		if got := amrOf(verifiedClaims(t, ts, academy, demo.VendorClientID, tok.Extra("id_token").(string))); !strings.Contains(strings.Join(got, " "), "mfa") {
			t.Errorf("amr of the operator authorization = %v; want mfa", got)
		}
	})
}
