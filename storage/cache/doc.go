// Package cache implements storage.Cache twice: Redis (NewRedis), shared by
// every replica of a deployment, and an in-memory twin (NewMemory) for the
// embedded default, where one process is the whole deployment. The cache
// holds authorization codes, browser sessions, CIMD documents, rate-limit
// counters and copies of revocation state (DESIGN §3, §4); both backends pass
// storagetest.RunCacheTests, so code written against one behaves the same on
// the other.
//
// Redis may be one server, a Sentinel group or a Cluster (the URL says
// which; parseRedisURL). On a Cluster, pub/sub is sharded and multi-key
// calls over several slots are split. A circuit breaker turns an outage
// into fast failures (storage.ErrUnavailable at once), reads have a short
// timeout, and an evicting maxmemory-policy is refused unless allowed.
//
// This is the only package that imports go-redis (DESIGN §2). It imports
// storage and tenant of ours and nothing else; in particular it never
// imports a handler package.
package cache
