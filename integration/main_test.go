package integration

import (
	"os"
	"testing"
)

// TestMain stops what the package's tests started once for all of them:
// the Mailpit of the account tests and the Redis Cluster and Sentinel
// group of the topology tests.
func TestMain(m *testing.M) {
	code := m.Run()
	stopAccountMailpit()
	if topologies.cluster != nil {
		topologies.cluster.Stop()
	}
	if topologies.sentinel != nil {
		topologies.sentinel.Stop()
	}
	os.Exit(code)
}
