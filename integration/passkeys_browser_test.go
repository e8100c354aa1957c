package integration

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"

	"github.com/lectern/lectern/internal/demo"
)

// Passkeys as people live them, in headless Chromium with the DevTools
// WebAuthn virtual authenticator (a platform authenticator with user
// verification): a member adds a passkey on the account page, signs in
// with it without a password (an application's sign-in: the id_token,
// verified with go-oidc, says amr hwk+mfa), uses it as the second factor
// after the password, renames and removes it.
func TestPasskeysBrowser(t *testing.T) {
	requireChromium(t)
	ts := startServer(t, backend{name: "embedded"}, nil)
	shots := webScreenshotDir(t)
	cb, callbackHits := appCallback(t, "Demo Member App", "Back in the app")

	browser := startChromium(t)
	academy := ts.academy()
	tab := webNewTab(t, browser, shots)
	tab.addVirtualAuthenticator(t)
	signOut := func() {
		t.Helper()
		ctx, cancel := tab.step()
		defer cancel()
		if _, err := chromedp.Call(ctx, network.ClearBrowserCookies, cdp.Empty{}); err != nil {
			t.Fatalf("clearing cookies: %v", err)
		}
	}

	// Add a passkey on the account page.
	tab.navigate(academy + "/account/security")
	tab.signIn(demo.StudentEmail, demo.StudentPassword)
	tab.waitVisible("#passkey-add")
	tab.typeInto("#passkey-name", "Test key")
	tab.typeInto("#passkey-password", demo.StudentPassword) // adding a factor asks for the password again
	tab.click("#passkey-add")
	tab.waitVisible(".flash")
	if got := tab.text(".flash"); !strings.Contains(got, "Passkey “Test key” added") {
		t.Fatalf("after adding a passkey the page says %q (error: %q)", got, tab.text("main"))
	}
	if got := tab.text("#passkey-list"); !strings.Contains(got, "Test key") {
		t.Fatalf("the passkey list shows %q", got)
	}
	tab.screenshot("account-security", false)
	tab.screenshot("account-security", true)

	// An application's sign-in with the passkey alone.
	signOut()
	f := newFlow(t, ts, academy, demo.MemberClientID, "openid", "profile", "email")
	f.conf.RedirectURL = cb.URL + "/callback"
	tab.navigate(f.authURL())
	tab.waitVisible("#passkey-signin")
	tab.screenshot("login-passkey", false)
	tab.click("#passkey-signin")
	tab.waitVisible("#consent-form")
	tab.click(`#consent-form button[value="approve"]`)
	tab.waitVisible("#callback-done")
	q := <-callbackHits
	tok, err := f.exchange(q.Get("code"))
	if err != nil {
		t.Fatalf("exchanging the code of a passkey sign-in: %v", err)
	}
	claims := verifiedClaims(t, ts, academy, demo.MemberClientID, tok.Extra("id_token").(string))
	if got := amrOf(claims); !slices.Equal(got, []string{"hwk", "mfa"}) {
		t.Errorf("amr of a passkey sign-in = %v; want hwk, mfa", got)
	}
	if claims["email"] != demo.StudentEmail {
		t.Errorf("the passkey signed in %v; want %s", claims["email"], demo.StudentEmail)
	}

	// The passkey as the second factor after the password.
	signOut()
	tab.navigate(academy + "/login?return_to=%2Faccount%2Fsecurity")
	tab.signIn(demo.StudentEmail, demo.StudentPassword)
	tab.waitVisible("#factor-passkey")
	if tab.exists("#factor-form") {
		t.Error("the factor page asks for an app code though no app is set up")
	}
	tab.screenshot("login-factor", false)
	tab.click("#factor-passkey")
	tab.waitVisible("#session-list")
	if got := tab.text(`#session-list li[data-current="true"]`); !strings.Contains(got, "password + passkey") {
		t.Errorf("this session says %q; want signed in with password + passkey", got)
	}
	if got := tab.text("#passkey-list"); !strings.Contains(got, "Last used") {
		t.Errorf("the passkey's last use is not shown: %q", got)
	}

	// Rename, then remove: the password alone signs in again.
	id := tab.eval(`document.querySelector("#passkey-list li").dataset.passkeyId`).(string)
	tab.eval(`document.querySelector("#passkey-name-` + id + `").value = ""`)
	tab.typeInto("#passkey-name-"+id, "Phone")
	tab.submit(`form[action="/account/security/passkeys/`+id+`/rename"] button`, http.StatusOK)
	if got := tab.text("#passkey-list"); !strings.Contains(got, "Phone") {
		t.Fatalf("after renaming the list shows %q", got)
	}
	tab.submit(`form[action="/account/security/passkeys/`+id+`/remove"] button`, http.StatusOK)
	if !tab.exists("#no-passkeys") {
		t.Fatal("the passkey is still listed after removing it")
	}
	signOut()
	tab.navigate(academy + "/login")
	tab.signIn(demo.StudentEmail, demo.StudentPassword)
	if loc := tab.location(); loc != academy+"/account/connections" {
		t.Fatalf("after removing the passkey a password sign-in ends at %s", loc)
	}
}

// addVirtualAuthenticator gives the tab a DevTools WebAuthn virtual
// authenticator: a platform authenticator (CTAP 2.1, resident keys) whose
// user verification always succeeds without a prompt.
func (tab *webTab) addVirtualAuthenticator(t *testing.T) {
	t.Helper()
	ctx, cancel := tab.step()
	defer cancel()
	if _, err := chromedp.Call(ctx, webauthn.Enable, webauthn.EnableParams{}); err != nil {
		t.Fatalf("WebAuthn.enable: %v", err)
	}
	if _, err := chromedp.Call(ctx, webauthn.AddVirtualAuthenticator, webauthn.AddVirtualAuthenticatorParams{Options: &webauthn.VirtualAuthenticatorOptions{
		Protocol: webauthn.AuthenticatorProtocolCtap2, Ctap2version: "ctap2_1", Transport: webauthn.AuthenticatorTransportInternal,
		HasResidentKey: true, HasUserVerification: true, IsUserVerified: true, AutomaticPresenceSimulation: true,
	}}); err != nil {
		t.Fatalf("WebAuthn.addVirtualAuthenticator: %v", err)
	}
}
