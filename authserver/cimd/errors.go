package cimd

import "strings"

// Error is every error of this package. Description says in one sentence
// what is wrong with the client_id, the fetch or the document, and is safe
// to show a person on an error page: it never carries internal details such
// as resolved addresses or response bodies. Error() adds the cause (see
// Unwrap), which may hold such details, and is meant for logs only.
//
// Errors are values: each is built fresh and never mutated after it is
// returned.
type Error struct {
	Description string

	cause error
}

func (e *Error) Error() string {
	if e.cause == nil {
		return "cimd: " + e.Description
	}
	return "cimd: " + strings.TrimSuffix(e.Description, ".") + ": " + e.cause.Error()
}

// Unwrap returns the cause: a network, TLS, DNS or JSON error, or nil.
func (e *Error) Unwrap() error { return e.cause }

func newError(cause error, description string) *Error {
	return &Error{Description: description, cause: cause}
}
