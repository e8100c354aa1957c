// Package mailpit is test support: it starts a real SMTP server (Mailpit,
// pinned in scripts/install-mailpit.sh) on loopback ports, stops it by
// PID, and reads what it received through Mailpit's HTTP API. Tests that
// need it skip when the binary is absent, unless LECTERN_REQUIRE_SERVICES=1
// (CI), where they fail.
//
// It imports nothing of ours.
package mailpit
