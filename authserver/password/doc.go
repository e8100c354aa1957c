// Package password hashes and verifies passwords with argon2id
// (golang.org/x/crypto/argon2, RFC 9106), in the PHC string format so that
// parameters can be raised later without invalidating stored hashes.
// It imports nothing of ours.
package password
