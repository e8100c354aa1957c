package redistest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Cluster is a running Redis Cluster of three masters and three replicas.
type Cluster struct {
	// Nodes are the six servers, in the order of the ports given; which
	// are masters changes with failovers (see Masters).
	Nodes []*Node
	// URL reaches the cluster through any node: redis+cluster://...
	URL string
	dir string
}

// StartCluster starts a Redis Cluster on ports (six node ports) whose
// cluster bus listens on busPorts (six more; Redis' default, port+10000,
// would leave the caller's range), and stops it when tb ends. It skips tb
// when the binaries are absent (fails with LECTERN_REQUIRE_SERVICES=1).
func StartCluster(tb testing.TB, ports, busPorts []int) *Cluster {
	tb.Helper()
	need(tb)
	c, err := NewCluster(ports, busPorts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(c.Stop)
	return c
}

// NewCluster is StartCluster for a TestMain that shares one cluster
// between the tests of a package: call Stop when they are done. Check
// Available first.
func NewCluster(ports, busPorts []int) (*Cluster, error) {
	if len(ports) != 6 || len(busPorts) != 6 {
		return nil, errors.New("redistest: a cluster needs 6 node ports and 6 bus ports")
	}
	dir, err := os.MkdirTemp("", "lectern-redis-cluster-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{dir: dir}
	ok := false
	defer func() {
		if !ok {
			c.Stop()
		}
	}()
	var addrs []string
	for i, p := range ports {
		ndir := filepath.Join(dir, strconv.Itoa(p))
		if err := os.Mkdir(ndir, 0o700); err != nil {
			return nil, err
		}
		n := newNode(p, serverBin, ndir,
			"--port", strconv.Itoa(p), "--bind", "127.0.0.1", "--protected-mode", "no",
			"--cluster-enabled", "yes", "--cluster-port", strconv.Itoa(busPorts[i]),
			"--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "1500",
			// A replica takes over whatever its last contact with the
			// master: tests kill masters on purpose.
			"--cluster-replica-validity-factor", "0",
			"--save", "", "--appendonly", "no", "--maxmemory-policy", "noeviction", "--dir", ndir)
		c.Nodes = append(c.Nodes, n)
		if err := n.Start(); err != nil {
			return nil, err
		}
		addrs = append(addrs, n.Addr())
	}
	args := append([]string{"--cluster", "create"}, addrs...)
	args = append(args, "--cluster-replicas", "1", "--cluster-yes")
	if out, err := exec.Command(cliBin, args...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("redistest: redis-cli --cluster create: %w\n%s", err, out)
	}
	if err := c.WaitHealthy(30 * time.Second); err != nil {
		return nil, err
	}
	c.URL = "redis+cluster://" + strings.Join(addrs, ",")
	ok = true
	return c, nil
}

// WaitHealthy waits until every running node reports cluster_state:ok with
// all slots served by three masters, and every other running node is a
// replica in sync with its master.
func (c *Cluster) WaitHealthy(timeout time.Duration) error {
	return waitFor(timeout, "a healthy cluster", func() error {
		for _, n := range c.Nodes {
			if !n.Running() {
				continue
			}
			info, err := n.CLI("CLUSTER", "INFO")
			if err != nil {
				return err
			}
			if infoField(info, "cluster_state") != "ok" || infoField(info, "cluster_slots_ok") != "16384" {
				return fmt.Errorf("node %d: %s", n.Port, strings.Join(strings.Fields(info)[:3], " "))
			}
		}
		masters, replicas, err := c.roles()
		if err != nil {
			return err
		}
		running := 0
		for _, n := range c.Nodes {
			if n.Running() {
				running++
			}
		}
		if len(masters) != 3 || len(replicas) != running-3 {
			return fmt.Errorf("%d masters, %d connected replicas of %d running nodes", len(masters), len(replicas), running)
		}
		for _, r := range replicas {
			info, err := r.CLI("INFO", "replication")
			if err != nil {
				return err
			}
			if infoField(info, "master_link_status") != "up" {
				return fmt.Errorf("replica %d: link %s", r.Port, infoField(info, "master_link_status"))
			}
		}
		return nil
	})
}

// Masters returns the running nodes that serve slots now.
func (c *Cluster) Masters() ([]*Node, error) {
	m, _, err := c.roles()
	return m, err
}

// roles asks a running node for CLUSTER NODES and sorts the running nodes
// into masters with slots and connected replicas.
func (c *Cluster) roles() (masters, replicas []*Node, err error) {
	var out string
	for _, n := range c.Nodes {
		if n.Running() {
			if out, err = n.CLI("CLUSTER", "NODES"); err == nil {
				break
			}
		}
	}
	if out == "" {
		return nil, nil, fmt.Errorf("redistest: no cluster node answers: %v", err)
	}
	byPort := map[int]*Node{}
	for _, n := range c.Nodes {
		byPort[n.Port] = n
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 8 {
			continue
		}
		addr := f[1]
		if i := strings.IndexByte(addr, '@'); i >= 0 {
			addr = addr[:i]
		}
		_, portStr, _ := strings.Cut(addr, ":")
		port, _ := strconv.Atoi(portStr)
		n := byPort[port]
		if n == nil || !n.Running() || strings.Contains(f[2], "fail") || f[7] != "connected" {
			continue
		}
		switch {
		case strings.Contains(f[2], "master") && len(f) > 8:
			masters = append(masters, n)
		case strings.Contains(f[2], "slave"):
			replicas = append(replicas, n)
		}
	}
	return masters, replicas, nil
}

// Stop kills every node and removes the cluster's directory.
func (c *Cluster) Stop() {
	stopAll(c.Nodes)
	if c.dir != "" {
		_ = os.RemoveAll(c.dir)
	}
}
