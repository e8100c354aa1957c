// Package integration holds the end-to-end tests of lectern, in the manner
// of fosite's integration/: each test starts real servers (internal/server,
// as `lectern serve` runs them, on loopback ports) and drives them with real
// clients: x/oauth2, go-oidc, the MCP go-sdk, a cookie-keeping browser and,
// where Chromium is installed, chromedp.
//
// Every flow runs on the embedded default (SQLite and the in-memory cache)
// and on PostgreSQL + Redis when they are reachable; with
// LECTERN_REQUIRE_SERVICES=1 unreachable services fail the tests instead of
// skipping them, and with LECTERN_REQUIRE_BROWSER=1 a missing Chromium
// does. One file per area (authorize, token, registration, cimd, memberapi,
// mcp, adminapi, web, deploy, agent docs, sites and outages); the shared
// harness is in harness_test.go and the *_helpers_test.go files.
//
// The package has no code outside tests and nothing imports it.
package integration
