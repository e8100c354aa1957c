// Package mail is the platform's transactional e-mail: the one template set
// of every message (invitations, sign-up verification, password reset,
// e-mail change; plain text with an HTML alternative, embedded, no
// tracking), the transports that deliver them (SMTP through
// wneessen/go-mail, or a directory of .eml files for the embedded default),
// and the sender loop that drains the durable outbox (storage.AccountStore)
// with leases, retries, backoff and dead-lettering.
//
// All wording lives in templates/, never in Go strings, so that it can be
// translated in one place. mail imports only tenant and storage (the outbox records
// and the store methods the sender loop needs); go-mail is imported nowhere else.
// It imports no handler package.
package mail
