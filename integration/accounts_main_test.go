package integration

import (
	"os"
	"testing"
)

// TestMain stops what the package's tests started once for all of them
// (the Mailpit of the account tests).
func TestMain(m *testing.M) {
	code := m.Run()
	stopAccountMailpit()
	os.Exit(code)
}
