// Command lectern-load is Lectern's load generator: it drives whole
// protocol flows against a running server (normally on PostgreSQL + Redis,
// see `make bench`) at fixed concurrency and reports operations per second
// and latency percentiles.
//
// Scenarios: "flow" (authorize with an existing session → token exchange
// with id_token), "refresh" (refresh-token rotation), "userinfo" (a bearer
// call), and later the member GraphQL and MCP calls. Setup creates bench
// clients through the store (DATABASE_URL) and signs in through the real
// login form, so the argon2 sign-in is outside the measured flows.
//
// It targets 127.0.0.1 only and runs for a bounded time.
package main
