package cache

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lectern/lectern/internal/redistest"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/storage/storagetest"
	"github.com/lectern/lectern/tenant"
)

// Ports of this package's private Redis topologies (issue 15's range
// 27000-27999; the integration tests use others, so packages can run in
// parallel).
var (
	clusterPorts     = []int{27001, 27002, 27003, 27004, 27005, 27006}
	clusterBusPorts  = []int{27011, 27012, 27013, 27014, 27015, 27016}
	sentinelRedis    = []int{27101, 27102, 27103}
	sentinelSentinel = []int{27201, 27202, 27203}
)

// The topologies are started by the first test that needs them and
// stopped after every test of the package has run.
var (
	clusterOnce, sentinelOnce sync.Once
	cluster                   *redistest.Cluster
	sentinel                  *redistest.SentinelGroup
	clusterErr, sentinelErr   error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if cluster != nil {
		cluster.Stop()
	}
	if sentinel != nil {
		sentinel.Stop()
	}
	os.Exit(code)
}

// skipWithoutTopologies skips (or, with LECTERN_REQUIRE_SERVICES=1, fails)
// when the Redis binaries are absent.
func skipWithoutTopologies(t *testing.T) {
	t.Helper()
	if err := redistest.Available(); err != nil {
		if storagetest.Required() {
			t.Fatalf("Redis topologies are required (LECTERN_REQUIRE_SERVICES=1): %v", err)
		}
		t.Skipf("%v; set LECTERN_REQUIRE_SERVICES=1 to fail instead of skipping", err)
	}
}

func sharedCluster(t *testing.T) *redistest.Cluster {
	t.Helper()
	skipWithoutTopologies(t)
	clusterOnce.Do(func() { cluster, clusterErr = redistest.NewCluster(clusterPorts, clusterBusPorts) })
	if clusterErr != nil {
		t.Fatal(clusterErr)
	}
	return cluster
}

func sharedSentinel(t *testing.T) *redistest.SentinelGroup {
	t.Helper()
	skipWithoutTopologies(t)
	sentinelOnce.Do(func() { sentinel, sentinelErr = redistest.NewSentinel(sentinelRedis, sentinelSentinel) })
	if sentinelErr != nil {
		t.Fatal(sentinelErr)
	}
	return sentinel
}

// topologyCache opens a cache on url under a prefix of its own; the
// topologies are private and thrown away, so nothing is cleaned up.
func topologyCache(t *testing.T, url string) *Redis {
	t.Helper()
	r, err := NewRedis(t.Context(), url, &RedisOptions{Prefix: randomPrefix(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

// The cache contract holds on a real 3-master Redis Cluster (keys of a
// site in one slot, sharded pub/sub) ...
func TestRedisCluster(t *testing.T) {
	c := sharedCluster(t)
	storagetest.RunCacheTests(t, func(t *testing.T) storage.Cache {
		r := topologyCache(t, c.URL)
		if r.Topology() != Cluster {
			t.Fatalf("topology %q for %s", r.Topology(), c.URL)
		}
		return r
	})
}

// ... and on a Sentinel group's master.
func TestRedisSentinel(t *testing.T) {
	g := sharedSentinel(t)
	storagetest.RunCacheTests(t, func(t *testing.T) storage.Cache {
		r := topologyCache(t, g.URL)
		if r.Topology() != Sentinel {
			t.Fatalf("topology %q for %s", r.Topology(), g.URL)
		}
		return r
	})
}

// Keys of many sites spread over the cluster's masters, and operations on
// several sites' keys at once (GetMulti, Delete) still work: they are split
// by slot.
func TestRedisClusterSpreadsSites(t *testing.T) {
	c := sharedCluster(t)
	r := topologyCache(t, c.URL)
	ctx := t.Context()
	var keys []string
	for site := range 64 {
		k := storage.CacheKey(tenant.ID(1000+site), "spread", "k")
		keys = append(keys, k)
		if err := r.Set(ctx, k, []byte(fmt.Sprint(site)), time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	vals, err := r.GetMulti(ctx, keys...)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vals {
		if string(v) != fmt.Sprint(i) {
			t.Fatalf("GetMulti value %d = %q", i, v)
		}
	}
	masters, err := c.Masters()
	if err != nil {
		t.Fatal(err)
	}
	used := 0
	for _, m := range masters {
		out, err := m.CLI("DBSIZE")
		if err != nil {
			t.Fatal(err)
		}
		if strings.TrimSpace(out) != "0" {
			used++
		}
	}
	if used != 3 {
		t.Errorf("64 sites' keys landed on %d of 3 masters", used)
	}
	if err := r.Delete(ctx, keys...); err != nil {
		t.Fatal(err)
	}
	if vals, err := r.GetMulti(ctx, keys...); err != nil || vals[0] != nil || vals[63] != nil {
		t.Fatalf("after Delete: %q, %v", vals, err)
	}
}

// The cache follows a Sentinel failover: after the master changes, writes
// and reads reach the new one.
func TestRedisSentinelFailover(t *testing.T) {
	g := redistest.StartSentinel(t, []int{27104, 27105, 27106}, []int{27204, 27205, 27206})
	r := topologyCache(t, g.URL)
	ctx := t.Context()
	if err := r.Set(ctx, "{s1}:k", []byte("before"), time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Failover(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		err := r.Set(ctx, "{s1}:k", []byte("after"), time.Minute)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("writes after the failover still fail: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	v, err := r.Get(ctx, "{s1}:k")
	if err != nil && !errors.Is(err, storage.ErrUnavailable) {
		t.Fatal(err)
	}
	if string(v) != "after" {
		t.Fatalf("Get after the failover = %q, %v", v, err)
	}
}
