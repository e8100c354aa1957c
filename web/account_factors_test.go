package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The security page asks for the current password on the forms that add a
// factor, says why a change was refused and links to signing in again,
// in the page's language.
func TestSecurityPageFactorProof(t *testing.T) {
	h := testHandler(t)
	rq := testRequest()
	d := securityData{chrome: chromeFor(rq, "account", "security"), PasskeysAvailable: true, HasPassword: true, SignInURL: signInAgainURL,
		Proof: "To change your second factors, first sign in again with your second factor.", ProofSignIn: true,
		TOTPError: "Your current password is wrong.", PasskeyError: "To change your second factors, first sign in again with your second factor.", ErrorSignIn: true}
	for _, c := range []struct {
		lang string
		want []string
	}{
		{"en", []string{`id="totp-password" name="password" type="password"`, `id="passkey-password" name="password" type="password"`,
			`id="factor-proof"`, `id="factor-sign-in"`, `href="/login?return_to=%2Faccount%2Fsecurity"`, `id="totp-error"`, "Your current password is wrong.",
			`id="passkey-error"`, "first sign in again with your second factor", "Your current password"}},
		{"de", []string{"Ihr aktuelles Passwort ist falsch.", "Um Ihre zweiten Faktoren zu ändern", "Erneut anmelden"}},
	} {
		r := httptest.NewRequest(http.MethodGet, securityPath, nil)
		r.Header.Set("Accept-Language", c.lang)
		w := httptest.NewRecorder()
		h.render(w, r, rq, http.StatusForbidden, "account_security", "Sign-in and security", d, nil)
		body := w.Body.String()
		for _, want := range c.want {
			if !strings.Contains(body, want) {
				t.Errorf("%s: the page lacks %q", c.lang, want)
			}
		}
	}
	// Without a password (no such account can be made today) the forms
	// ask for none.
	d = securityData{chrome: chromeFor(rq, "account", "security"), PasskeysAvailable: true}
	w := httptest.NewRecorder()
	h.render(w, httptest.NewRequest(http.MethodGet, securityPath, nil), rq, http.StatusOK, "account_security", "Sign-in and security", d, nil)
	if strings.Contains(w.Body.String(), `name="password"`) || strings.Contains(w.Body.String(), `id="factor-proof"`) {
		t.Error("a page without a password or a refusal asks for the password or shows a refusal")
	}
}
