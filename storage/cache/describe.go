package cache

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"
)

// Describe says in a few words why a cache call failed, for readiness
// answers and logs that operators read: never the server's address or its
// own message.
func Describe(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, errCircuitOpen):
		return "circuit breaker open: Redis failed repeatedly"
	case errors.Is(err, errMemoryClosed):
		return "closed"
	case redis.IsOOMError(err):
		return "refuses writes: out of memory (maxmemory reached, noeviction)"
	case redis.IsReadOnlyError(err):
		return "refuses writes: read-only replica"
	case redis.IsLoadingError(err):
		return "loading its data set"
	case redis.IsClusterDownError(err), redis.IsMasterDownError(err), redis.IsTryAgainError(err):
		return "failing over"
	case redis.IsMaxClientsError(err):
		return "too many clients"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	default:
		return "unreachable"
	}
}
