// Package storagetest holds the exported contract suites every storage and
// cache backend runs (RunStoreTests, RunCacheTests), in the manner of dex's
// conformance package, and the helpers that find the real PostgreSQL and
// Redis for tests.
//
// Service tests skip with a clear message when a service is unreachable,
// unless LECTERN_REQUIRE_SERVICES=1 is set (as .ci/run does): then they fail.
// Every suite builds two sites and asserts that neither sees the other.
package storagetest
