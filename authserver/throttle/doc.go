// Package throttle is the sign-in throttle (DESIGN §10, issue 14): every
// check of a password a person types goes through it, whichever page asks
// (the sign-in form, the e-mail change form, an invitation accepted by
// signing in), so failures at any of them count together and every check
// waits for the shared password gate. A new password typed at a form (a
// sign-up, a reset, an invitation accepted with a new account) is the same
// argon2id work: Hash spends the same per-site budget and waits for the
// same gate.
//
// It is a door of authserver: web and accounts import it. It imports
// tenant, storage, limits, i18n and authserver/password of ours; never a
// handler.
package throttle
