package redistest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// MasterName is the name the sentinels monitor the group's master under.
const MasterName = "mymaster"

// SentinelGroup is a running master, two replicas and three sentinels.
type SentinelGroup struct {
	// Redis are the data nodes; the first started as the master (see
	// Master for the current one).
	Redis []*Node
	// Sentinels watch them with quorum 2, declaring a master down after
	// one second.
	Sentinels []*Node
	// URL reaches the group's master through the sentinels:
	// redis+sentinel://s1,s2,s3/mymaster/0.
	URL string
	dir string
}

// StartSentinel starts a Sentinel group on redisPorts (three: the master,
// then two replicas) and sentinelPorts (three), and stops it when tb
// ends. It skips tb when the binaries are absent (fails with
// LECTERN_REQUIRE_SERVICES=1).
func StartSentinel(tb testing.TB, redisPorts, sentinelPorts []int) *SentinelGroup {
	tb.Helper()
	need(tb)
	g, err := NewSentinel(redisPorts, sentinelPorts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(g.Stop)
	return g
}

// NewSentinel is StartSentinel for a TestMain: call Stop when done. Check
// Available first.
func NewSentinel(redisPorts, sentinelPorts []int) (*SentinelGroup, error) {
	if len(redisPorts) != 3 || len(sentinelPorts) != 3 {
		return nil, errors.New("redistest: a sentinel group needs 3 Redis ports and 3 sentinel ports")
	}
	dir, err := os.MkdirTemp("", "lectern-redis-sentinel-")
	if err != nil {
		return nil, err
	}
	g := &SentinelGroup{dir: dir}
	ok := false
	defer func() {
		if !ok {
			g.Stop()
		}
	}()
	master := redisPorts[0]
	for i, p := range redisPorts {
		ndir := filepath.Join(dir, strconv.Itoa(p))
		if err := os.Mkdir(ndir, 0o700); err != nil {
			return nil, err
		}
		args := []string{"--port", strconv.Itoa(p), "--bind", "127.0.0.1", "--protected-mode", "no",
			"--save", "", "--appendonly", "no", "--maxmemory-policy", "noeviction", "--dir", ndir}
		if i > 0 {
			args = append(args, "--replicaof", "127.0.0.1", strconv.Itoa(master))
		}
		n := newNode(p, serverBin, ndir, args...)
		g.Redis = append(g.Redis, n)
		if err := n.Start(); err != nil {
			return nil, err
		}
	}
	var addrs []string
	for _, p := range sentinelPorts {
		ndir := filepath.Join(dir, "sentinel-"+strconv.Itoa(p))
		if err := os.Mkdir(ndir, 0o700); err != nil {
			return nil, err
		}
		// Sentinel rewrites its configuration file as it learns the
		// group, so each needs its own, writable.
		conf := filepath.Join(ndir, "sentinel.conf")
		body := fmt.Sprintf("port %d\nbind 127.0.0.1\nprotected-mode no\ndir %s\n"+
			"sentinel monitor %s 127.0.0.1 %d 2\n"+
			"sentinel down-after-milliseconds %s 1000\n"+
			"sentinel failover-timeout %s 5000\n"+
			"sentinel parallel-syncs %s 1\n", p, ndir, MasterName, master, MasterName, MasterName, MasterName)
		if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
			return nil, err
		}
		n := newNode(p, sentinelBin, ndir, conf)
		g.Sentinels = append(g.Sentinels, n)
		if err := n.Start(); err != nil {
			return nil, err
		}
		addrs = append(addrs, n.Addr())
	}
	if err := g.WaitHealthy(30 * time.Second); err != nil {
		return nil, err
	}
	g.URL = "redis+sentinel://" + strings.Join(addrs, ",") + "/" + MasterName + "/0"
	ok = true
	return g, nil
}

// WaitHealthy waits until every running sentinel agrees on a master, knows
// the running replicas and the other running sentinels, and the replicas
// are in sync with the master.
func (g *SentinelGroup) WaitHealthy(timeout time.Duration) error {
	return waitFor(timeout, "a healthy sentinel group", func() error {
		want := ""
		runningRedis, runningSentinels := 0, 0
		for _, n := range g.Redis {
			if n.Running() {
				runningRedis++
			}
		}
		for _, s := range g.Sentinels {
			if s.Running() {
				runningSentinels++
			}
		}
		for _, s := range g.Sentinels {
			if !s.Running() {
				continue
			}
			info, err := s.CLI("INFO", "sentinel")
			if err != nil {
				return err
			}
			line := infoField(info, "master0")
			if !strings.Contains(line, "status=ok") {
				return fmt.Errorf("sentinel %d: %s", s.Port, line)
			}
			for _, kv := range []struct {
				key  string
				want int
			}{{"slaves", runningRedis - 1}, {"sentinels", runningSentinels}} {
				if !strings.Contains(line, kv.key+"="+strconv.Itoa(kv.want)) {
					return fmt.Errorf("sentinel %d: %s (want %s=%d)", s.Port, line, kv.key, kv.want)
				}
			}
			addr, err := s.CLI("SENTINEL", "get-master-addr-by-name", MasterName)
			if err != nil {
				return err
			}
			addr = strings.Join(strings.Fields(addr), ":")
			if want == "" {
				want = addr
			} else if addr != want {
				return fmt.Errorf("sentinels disagree on the master: %s, %s", want, addr)
			}
		}
		m := g.node(want)
		if m == nil || !m.Running() {
			return fmt.Errorf("the master %s is not running", want)
		}
		info, err := m.CLI("INFO", "replication")
		if err != nil {
			return err
		}
		if infoField(info, "role") != "master" || infoField(info, "connected_slaves") != strconv.Itoa(runningRedis-1) {
			return fmt.Errorf("master %s: role %s, %s replicas", want, infoField(info, "role"), infoField(info, "connected_slaves"))
		}
		return nil
	})
}

// Master returns the data node the sentinels name as master now.
func (g *SentinelGroup) Master() (*Node, error) {
	for _, s := range g.Sentinels {
		if !s.Running() {
			continue
		}
		addr, err := s.CLI("SENTINEL", "get-master-addr-by-name", MasterName)
		if err != nil {
			continue
		}
		if n := g.node(strings.Join(strings.Fields(addr), ":")); n != nil {
			return n, nil
		}
	}
	return nil, errors.New("redistest: no sentinel names a master")
}

// Failover asks the sentinels for a failover (SENTINEL FAILOVER: no
// agreement needed, the old master is demoted cleanly) and waits until a
// replica is master. It returns the new master.
func (g *SentinelGroup) Failover(timeout time.Duration) (*Node, error) {
	old, err := g.Master()
	if err != nil {
		return nil, err
	}
	for _, s := range g.Sentinels {
		if s.Running() {
			if _, err = s.CLI("SENTINEL", "FAILOVER", MasterName); err == nil {
				break
			}
		}
	}
	if err != nil {
		return nil, err
	}
	var now *Node
	err = waitFor(timeout, "a new master", func() error {
		if now, err = g.Master(); err != nil {
			return err
		}
		if now == old {
			return errors.New("still the old master")
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Every running sentinel names it, and it acts as master. (The
	// sentinels learn of the demoted master's new role only from their
	// next INFO, up to ten seconds later; WaitHealthy waits for that.)
	err = waitFor(timeout, "the new master confirmed", func() error {
		for _, s := range g.Sentinels {
			if !s.Running() {
				continue
			}
			addr, err := s.CLI("SENTINEL", "get-master-addr-by-name", MasterName)
			if err != nil {
				return err
			}
			if a := strings.Join(strings.Fields(addr), ":"); a != now.Addr() {
				return fmt.Errorf("sentinel %d names %s", s.Port, a)
			}
		}
		info, err := now.CLI("INFO", "replication")
		if err != nil {
			return err
		}
		if infoField(info, "role") != "master" {
			return fmt.Errorf("%s has role %s", now.Addr(), infoField(info, "role"))
		}
		return nil
	})
	return now, err
}

func (g *SentinelGroup) node(addr string) *Node {
	for _, n := range g.Redis {
		if n.Addr() == addr {
			return n
		}
	}
	return nil
}

// Stop kills every process and removes the group's directory.
func (g *SentinelGroup) Stop() {
	stopAll(g.Sentinels)
	stopAll(g.Redis)
	if g.dir != "" {
		_ = os.RemoveAll(g.dir)
	}
}
