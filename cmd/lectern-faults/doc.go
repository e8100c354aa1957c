// Command lectern-faults is the driver of `make faults` and
// `make faults-short` (docs/RELIABILITY.md): it injects faults into a real
// deployment under load and checks that nothing is lost or revived.
//
// Each scenario starts its own PostgreSQL (initdb and postgres from
// /usr/lib/postgresql/15/bin, run as the postgres user when the driver is
// root, a copy of a template data directory made once per run), its own
// Redis (a server, a Sentinel group or a Cluster, through
// internal/redistest), and `lectern serve` (one replica on the front port,
// or three behind nginx running deploy/nginx/lectern.conf), all on
// loopback ports 33000-33999. It drives bounded load with real clients
// (the sign-in and consent forms through internal/oauthtest, the token
// endpoint through golang.org/x/oauth2; userinfo and revocation over
// HTTP), injects the fault, and checks the invariants: no refresh token
// accepted twice, nothing revoked accepted again, no 401 for a valid
// token, 503 and never 500 during an outage, and the recovery time. It
// prints a Markdown table and exits 1 when an invariant failed.
//
// It stops every process it started by PID, also on failure or
// interrupt (and the children die with it: Pdeathsig).
package main
