// Package platform holds the hosting provider's operations that span
// storage, key rings and the cache: creating and changing sites (with their
// key rings) and broadcasting what changed so that every replica drops its
// in-process copies. The CLI, the demo seed and the admin area share it.
//
// It imports storage, tenant, authserver/keys, authserver/password,
// authserver/scope and authserver/clientmeta (the client-metadata rules it
// applies when creating clients); never a handler package.
package platform
