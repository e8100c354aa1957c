package redistest

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// The handles work as a fault test needs them: a killed master is replaced
// by its replica, the killed node comes back as a replica, and the cluster
// is whole again. (Sentinel failover is tested with the cache client in
// storage/cache, TestRedisSentinelFailover.)
func TestClusterMasterKilledAndRestarted(t *testing.T) {
	c := StartCluster(t, []int{27041, 27042, 27043, 27044, 27045, 27046}, []int{27051, 27052, 27053, 27054, 27055, 27056})
	if !strings.HasPrefix(c.URL, "redis+cluster://127.0.0.1:27041,") {
		t.Fatalf("URL %q", c.URL)
	}
	masters, err := c.Masters()
	if err != nil || len(masters) != 3 {
		t.Fatalf("masters %v, %v", masters, err)
	}
	victim := masters[0]
	if victim.PID() == 0 {
		t.Fatal("no PID for a running node")
	}
	if err := victim.Kill(); err != nil {
		t.Fatal(err)
	}
	if victim.Running() {
		t.Fatal("the killed node still runs")
	}
	if err := c.WaitHealthy(30 * time.Second); err != nil {
		t.Fatalf("after killing a master: %v", err)
	}
	now, err := c.Masters()
	if err != nil || len(now) != 3 || slices.Contains(now, victim) {
		t.Fatalf("masters after the kill: %v, %v", now, err)
	}
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitHealthy(30 * time.Second); err != nil {
		t.Fatalf("after restarting the old master: %v", err)
	}
	if now, _ := c.Masters(); slices.Contains(now, victim) {
		t.Fatal("the restarted node took its slots back by itself")
	}
}
