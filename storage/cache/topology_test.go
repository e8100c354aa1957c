package cache

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

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

// moveSlot moves slot from the master that serves it to another master of
// c, as an operator's resharding does (IMPORTING, MIGRATING, the slot's
// keys migrated, then NODE on every master), and returns the new owner's
// address.
func moveSlot(t *testing.T, c *redistest.Cluster, slot int) string {
	t.Helper()
	ctx := t.Context()
	masters, err := c.Masters()
	if err != nil {
		t.Fatal(err)
	}
	clients := map[string]*redis.Client{}
	ids := map[string]string{}
	for _, m := range masters {
		cl := redis.NewClient(&redis.Options{Addr: m.Addr()})
		t.Cleanup(func() { _ = cl.Close() })
		clients[m.Addr()] = cl
		if ids[m.Addr()], err = cl.Do(ctx, "CLUSTER", "MYID").Text(); err != nil {
			t.Fatal(err)
		}
	}
	shards, err := clients[masters[0].Addr()].ClusterShards(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	var from, to string
	for _, sh := range shards {
		if servesSlot(sh.Slots, slot) {
			from, _ = shardMaster(sh)
		}
	}
	for addr := range clients {
		if addr != from {
			to = addr
			break
		}
	}
	if clients[from] == nil || to == "" {
		t.Fatalf("slot %d: served by %q, masters %v", slot, from, ids)
	}
	src, dst := clients[from], clients[to]
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(dst.Do(ctx, "CLUSTER", "SETSLOT", slot, "IMPORTING", ids[from]).Err())
	must(src.Do(ctx, "CLUSTER", "SETSLOT", slot, "MIGRATING", ids[to]).Err())
	host, port, _ := strings.Cut(to, ":")
	for {
		keys, err := src.ClusterGetKeysInSlot(ctx, slot, 100).Result()
		must(err)
		if len(keys) == 0 {
			break
		}
		args := []any{"MIGRATE", host, port, "", 0, 5000, "KEYS"}
		for _, k := range keys {
			args = append(args, k)
		}
		must(src.Do(ctx, args...).Err())
	}
	// The new owner first, then the old one, then the rest: what
	// redis-cli --cluster reshard does.
	must(dst.Do(ctx, "CLUSTER", "SETSLOT", slot, "NODE", ids[to]).Err())
	must(src.Do(ctx, "CLUSTER", "SETSLOT", slot, "NODE", ids[to]).Err())
	for addr, cl := range clients {
		if addr != from && addr != to {
			must(cl.Do(ctx, "CLUSTER", "SETSLOT", slot, "NODE", ids[to]).Err())
		}
	}
	return to
}

// Audit R: when a broadcast channel's slot moved to another master, the
// subscription ended and subscribing again failed with MOVED for about a
// minute (go-redis places a sharded subscription by its slot map, which it
// refreshed only every 60 s), so replicas heard no broadcasts meanwhile.
// Subscribe now reloads the map on a redirection: the channel is heard
// again within a second or two.
func TestRedisClusterSubscribeFollowsASlotMove(t *testing.T) {
	c := sharedCluster(t)
	prefix := randomPrefix(t)
	open := func() *Redis {
		r, err := NewRedis(t.Context(), c.URL, &RedisOptions{Prefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = r.Close() })
		return r
	}
	sub := open()
	ctx := t.Context()
	const channel = "lectern:moved"
	msgs, err := sub.Subscribe(ctx, channel)
	if err != nil {
		t.Fatal(err)
	}
	admin := redis.NewClient(&redis.Options{Addr: c.Nodes[0].Addr()})
	t.Cleanup(func() { _ = admin.Close() })
	slot, err := admin.ClusterKeySlot(ctx, prefix+channel).Result()
	if err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	to := moveSlot(t, c, int(slot))
	select {
	case _, ok := <-msgs:
		if ok {
			t.Fatal("a message on a channel nobody published to")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the subscription did not end when its slot moved")
	}
	// What platform.Watch does after its one-second pause.
	msgs, err = sub.Subscribe(ctx, channel)
	if err != nil {
		t.Fatalf("subscribing again %v after the slot moved to %s: %v", time.Since(start).Round(time.Millisecond), to, err)
	}
	if err := open().Publish(ctx, channel, []byte("after the move")); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-msgs:
		if string(m) != "after the move" {
			t.Fatalf("message %q", m)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("no broadcast after subscribing again")
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("the channel was heard again %v after the slot moved; want a second or two", d.Round(time.Millisecond))
	}
}

// Audit R: misconfigured URLs failed start-up with errors that did not say
// what was wrong ("cache: miss" for a master name the sentinels do not
// know) or not at all (a Cluster node given as one server, whose other
// slots then failed every request with MOVED). NewRedis now names them.
func TestRedisStartRefusesAMisconfiguredURL(t *testing.T) {
	g := sharedSentinel(t)
	c := sharedCluster(t)
	for _, tc := range []struct {
		name, url, want string
	}{
		{"unknown sentinel master", strings.Replace(g.URL, "/"+redistest.MasterName+"/", "/nosuchmaster/", 1),
			`sentinels do not know master "nosuchmaster"`},
		{"cluster node as one server", "redis://" + c.Nodes[0].Addr() + "/0",
			"is a Redis Cluster node; reach the Cluster with redis+cluster://"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewRedis(t.Context(), tc.url, &RedisOptions{Prefix: randomPrefix(t)})
			if err == nil {
				_ = r.Close()
				t.Fatalf("NewRedis(%s) succeeded; want an error saying %q", tc.url, tc.want)
			}
			t.Log(err)
			if !strings.Contains(err.Error(), tc.want) || errors.Is(err, storage.ErrCacheMiss) {
				t.Errorf("NewRedis(%s): %v; want an error saying %q", tc.url, err, tc.want)
			}
		})
	}
}

// Audit R: readiness probed a write with one {platform} key, which lives
// on one master, so it answered ready while another master was full and
// every sign-in of the sites there failed. ProbeWrite writes on each
// master: a full one that does not hold {platform} fails it.
func TestRedisClusterProbeWriteReachesEveryMaster(t *testing.T) {
	c := sharedCluster(t)
	r := topologyCache(t, c.URL)
	ctx := t.Context()
	if err := r.ProbeWrite(ctx, "probe", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	shards, err := r.cluster.ClusterShards(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	masters, keys := probeKeys(shards, "probe")
	if len(keys) != 3 {
		t.Fatalf("probe keys %v for masters %v", keys, masters)
	}
	admin := redis.NewClient(&redis.Options{Addr: c.Nodes[0].Addr()})
	t.Cleanup(func() { _ = admin.Close() })
	for i, k := range keys {
		slot, err := admin.ClusterKeySlot(ctx, r.key(k)).Result()
		if err != nil {
			t.Fatal(err)
		}
		if want := keySlot(k[1:strings.IndexByte(k, '}')]); int(slot) != want {
			t.Errorf("CLUSTER KEYSLOT %s = %d; keySlot says %d", k, slot, want)
		}
		if !servesSlot(slotsOf(shards, masters[i]), int(slot)) {
			t.Errorf("probe key %s (slot %d) is not on master %s", k, slot, masters[i])
		}
	}

	// Fill up a master that does not hold {platform}.
	platformSlot, err := admin.ClusterKeySlot(ctx, r.key(storage.PlatformKey("ready", "x"))).Result()
	if err != nil {
		t.Fatal(err)
	}
	var full string
	for _, m := range masters {
		if !servesSlot(slotsOf(shards, m), int(platformSlot)) {
			full = m
			break
		}
	}
	fc := redis.NewClient(&redis.Options{Addr: full})
	t.Cleanup(func() { _ = fc.Close() })
	if err := fc.ConfigSet(ctx, "maxmemory", "1").Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fc.ConfigSet(context.Background(), "maxmemory", "0").Err() })
	if err := r.Set(ctx, storage.PlatformKey("ready", "probe"), []byte("1"), 10*time.Second); err != nil {
		t.Fatalf("a {platform} write with %s full: %v (the test proves nothing)", full, err)
	}
	err = r.ProbeWrite(ctx, "probe", 10*time.Second)
	if !errors.Is(err, storage.ErrUnavailable) || Describe(err) != "refuses writes: out of memory (maxmemory reached, noeviction)" || !strings.Contains(err.Error(), full) {
		t.Fatalf("ProbeWrite with master %s full: %v (%s); want out of memory, naming the master", full, err, Describe(err))
	}
}

// slotsOf returns the slot ranges of master in shards.
func slotsOf(shards []redis.ClusterShard, master string) []redis.SlotRange {
	for _, sh := range shards {
		if addr, ok := shardMaster(sh); ok && addr == master {
			return sh.Slots
		}
	}
	return nil
}
