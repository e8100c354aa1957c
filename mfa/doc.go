// Package mfa holds the second factors every door shares: TOTP codes with
// one-time recovery codes (pquerna/otp), and passkeys (WebAuthn,
// go-webauthn) with one relying party per site. The sign-in pages
// (authserver) verify them, the account pages (web) enrol them; neither
// imports the other, so the ceremony state and the checks live here.
//
// It is a leaf beside session: it imports storage and tenant only, and is
// the one package that imports the two libraries.
package mfa
