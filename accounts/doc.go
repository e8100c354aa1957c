// Package accounts serves the pages that create, join or recover an
// account before (or instead of) signing in, on each site's origin:
// accepting an invitation (/invitations/accept), signing up
// (/signup, /signup/verify; when the site allows it), choosing a new
// password (/password/forgot, /password/reset) and confirming a new e-mail
// address (/email/confirm).
//
// Every form carries a CSRF token (the session package's double-submit
// cookie) and is refused from another origin; every mailed link is
// single-use, stored hashed and compared in constant time; an expired,
// used or other site's link gets a plain page that changes nothing; no
// page tells whether an address has an account. The account operations
// themselves are internal/platform's; this package is their pages.
//
// It is a handler: it imports tenant, storage, ui, session,
// internal/platform and mail (for the kinds that name rate limits); never
// another handler package, gorm or go-redis.
package accounts
