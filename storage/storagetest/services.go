package storagetest

import (
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// Defaults of the services on a development machine and in CI.
const (
	DefaultPostgresURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	DefaultRedisURL    = "redis://127.0.0.1:6379/0"
)

// Required reports whether LECTERN_REQUIRE_SERVICES asks service tests to
// fail rather than skip when a service is unreachable.
func Required() bool {
	v := os.Getenv("LECTERN_REQUIRE_SERVICES")
	return v != "" && v != "0" && !strings.EqualFold(v, "false")
}

// PostgresURL returns the PostgreSQL URL for tests (LECTERN_TEST_POSTGRES_URL
// or DefaultPostgresURL), skipping or failing the test when it is
// unreachable.
func PostgresURL(tb testing.TB) string {
	tb.Helper()
	u := envOr("LECTERN_TEST_POSTGRES_URL", DefaultPostgresURL)
	need(tb, "PostgreSQL", u, "127.0.0.1:5432")
	return u
}

// RedisURL returns the Redis URL for tests (LECTERN_TEST_REDIS_URL or
// DefaultRedisURL), skipping or failing the test when it is unreachable.
func RedisURL(tb testing.TB) string {
	tb.Helper()
	u := envOr("LECTERN_TEST_REDIS_URL", DefaultRedisURL)
	need(tb, "Redis", u, "127.0.0.1:6379")
	return u
}

func need(tb testing.TB, name, url, fallbackAddr string) {
	tb.Helper()
	addr := hostPort(url, fallbackAddr)
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err == nil {
		c.Close()
		return
	}
	if Required() {
		tb.Fatalf("%s at %s is required (LECTERN_REQUIRE_SERVICES=1) but unreachable: %v", name, addr, err)
	}
	tb.Skipf("%s at %s unreachable (%v); set LECTERN_REQUIRE_SERVICES=1 to fail instead of skipping", name, addr, err)
}

// hostPort extracts host:port from a URL of the form scheme://[user@]host:port/...
func hostPort(url, fallback string) string {
	_, rest, ok := strings.Cut(url, "://")
	if !ok {
		return fallback
	}
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		rest = rest[i+1:]
	}
	if rest == "" {
		return fallback
	}
	if !strings.Contains(rest, ":") {
		return rest + ":" + fallback[strings.LastIndexByte(fallback, ':')+1:]
	}
	return rest
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
