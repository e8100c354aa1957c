// Package filestoretest is the contract every adminapi.FileStore meets:
// written keys read back, per site, deletes are idempotent, and keys the
// API would never choose are refused before they reach a path or an object
// name. The disk store and the S3 store both run it.
package filestoretest
