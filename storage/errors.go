package storage

import "errors"

var (
	// ErrNotFound: no row (or no cache entry) answers the request.
	ErrNotFound = errors.New("storage: not found")
	// ErrConflict: the write would violate a uniqueness rule (duplicate slug,
	// e-mail, client_id, ...).
	ErrConflict = errors.New("storage: conflict")
	// ErrRefreshReused: a refresh token that was already rotated was presented
	// again; its grant has been revoked (DESIGN §4 reuse detection).
	ErrRefreshReused = errors.New("storage: refresh token reused; grant revoked")
	// ErrUnavailable: the backing service cannot be reached.
	ErrUnavailable = errors.New("storage: backend unavailable")
)
