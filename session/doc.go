// Package session is the browser session of a site and its anti-forgery
// (CSRF) tokens: the cookie holds a random ID, the cache only its hash
// (DESIGN §3); forms carry the session's CSRF token, and the sign-in page,
// shown before a session exists, a double-submit cookie. CheckCSRF also
// refuses a form a browser marks as cross-origin (net/http's
// CrossOriginProtection), whatever token it carries.
//
// Signing in at /login (authserver) signs a person in to the admin area and
// the account pages (web) too, so both use this package; neither imports
// the other. session imports only tenant and storage (the cache
// interface): never a handler package, gorm or go-redis.
package session
