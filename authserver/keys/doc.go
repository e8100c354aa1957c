// Package keys owns the per-site ES256 (P-256) signing key rings of the
// authorization server (DESIGN §4): generating keys, sealing their private
// halves under the platform key-encryption key (KEK) with AES-256-GCM,
// rotation ("next" → "active" → "retired"), the signing key used for access
// tokens (RFC 9068) and id_tokens, and each site's JSON Web Key Set
// (RFC 7517 §5) served at its jwks_uri.
//
// A Manager keeps one in-process ring per site, refreshed from the store
// after a short TTL and never later than a pending key's activation, so
// serving the JWKS or fetching the signer is a map lookup whose cost does
// not depend on the number of sites. A ring's private key is unsealed the
// first time the site signs, so serving a JWKS never pays for it, and rings
// are bounded (Options.MaxRings, least recently used dropped). Rotation state is derived from the
// stored rows and the clock, so every replica reaches the same answer and
// the transitions it persists are idempotent.
//
// Private keys leave this package only as *ecdsa.PrivateKey values in
// memory; they are never written unsealed, logged, or put into errors. A row
// that does not open (wrong KEK, altered or moved ciphertext, bad JWK or
// PKCS #8) is a *CorruptKeyError naming site and kid, so the HTTP edge can
// answer 503 for that site alone.
//
// It imports storage, tenant and libraries (go-jose, x/sync) only; never
// authserver, echo, gorm or go-redis.
package keys
