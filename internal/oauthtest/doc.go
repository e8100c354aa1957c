// Package oauthtest drives the real sign-in and consent pages the way a
// person's browser does, for end-to-end tests: it keeps cookies, follows
// redirects on the authorization server's origin, fills the forms by their
// DESIGN §9 names (login-form, consent-form, csrf_token, decision) and stops
// at the client's redirect URI without requesting it.
//
// It is test support only; production code never imports it.
package oauthtest
