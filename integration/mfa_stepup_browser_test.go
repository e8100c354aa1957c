package integration

import (
	"net/http"
	"strings"
	"testing"
)

// Adding a passkey in a browser (Chromium, the DevTools WebAuthn virtual
// authenticator) asks for the current password on the form: a wrong one
// adds nothing, the right one adds the passkey, and the owner is mailed;
// removing it (the session proved it by adding it) is mailed too (audit
// W, finding 1).
func TestPasskeyAddTakesThePasswordBrowser(t *testing.T) {
	requireChromium(t)
	ts, mp := accountServer(t, backend{name: "embedded"}, nil)
	academy := ts.academy()
	email, pw := stepUpMember(t, ts, "pkadd")

	browser := startChromium(t)
	tab := webNewTab(t, browser, webScreenshotDir(t))
	tab.addVirtualAuthenticator(t)

	tab.navigate(academy + "/account/security")
	tab.signIn(email, pw)
	tab.waitVisible("#passkey-add")
	tab.typeInto("#passkey-name", "Test key")
	tab.typeInto("#passkey-password", "not-the-password")
	tab.click("#passkey-add")
	tab.waitVisible("#passkey-add-error")
	if got := tab.text("#passkey-add-error"); got != "Your current password is wrong." {
		t.Fatalf("adding a passkey with a wrong password says %q", got)
	}
	if !tab.exists("#no-passkeys") {
		t.Fatal("a passkey is listed after a wrong password")
	}
	tab.eval(`document.querySelector("#passkey-password").value = ""`)
	tab.typeInto("#passkey-password", pw)
	tab.click("#passkey-add")
	tab.waitVisible(".flash")
	if got := tab.text(".flash"); !strings.Contains(got, "Passkey “Test key” added") {
		t.Fatalf("after adding a passkey with the password the page says %q (%q)", got, tab.text("main"))
	}
	m := mailTo(t, mp, email, 1)
	if m.Subject != "A second factor was added to your account at Demo Academy" || !strings.Contains(m.Text, "A passkey named “Test key” was added to your account at Demo Academy") {
		t.Fatalf("the notice of a new passkey: %q\n%s", m.Subject, m.Text)
	}

	id := tab.eval(`document.querySelector("#passkey-list li").dataset.passkeyId`).(string)
	tab.submit(`form[action="/account/security/passkeys/`+id+`/remove"] button`, http.StatusOK)
	if !tab.exists("#no-passkeys") {
		t.Fatal("the passkey is still listed after removing it")
	}
	if m := mailTo(t, mp, email, 2); !strings.Contains(m.Text, "The passkey named “Test key” was removed") {
		t.Fatalf("the notice of a removed passkey: %q\n%s", m.Subject, m.Text)
	}
}
