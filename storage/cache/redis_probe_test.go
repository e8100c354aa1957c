package cache

import (
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// keySlot agrees with Redis' CLUSTER KEYSLOT (values from the Redis
// Cluster specification and redis-cli).
func TestKeySlot(t *testing.T) {
	for tag, want := range map[string]int{"123456789": 0x31c3, "foo": 12182, "somekey": 11058, "platform": 1380, "": 0} {
		if got := keySlot(tag); got != want {
			t.Errorf("keySlot(%q) = %d, want %d", tag, got, want)
		}
	}
}

// Each master gets one probe key, in a slot it serves, even one that
// serves a single slot.
func TestProbeKeys(t *testing.T) {
	node := func(host string, port int64, role string) redis.Node {
		return redis.Node{Endpoint: host, IP: host, Port: port, Role: role}
	}
	shards := []redis.ClusterShard{
		{Slots: []redis.SlotRange{{Start: 0, End: 5460}}, Nodes: []redis.Node{node("a", 2, "replica"), node("a", 1, "master")}},
		{Slots: []redis.SlotRange{{Start: 5461, End: 10922}}, Nodes: []redis.Node{node("b", 1, "master")}},
		{Slots: []redis.SlotRange{{Start: 10923, End: 12492}, {Start: 12494, End: 16383}}, Nodes: []redis.Node{node("c", 1, "master")}},
		{Slots: []redis.SlotRange{{Start: 12493, End: 12493}}, Nodes: []redis.Node{node("d", 1, "master")}},
		{Slots: nil, Nodes: []redis.Node{node("e", 1, "master")}}, // serves no slot
	}
	masters, keys := probeKeys(shards, "replica")
	if len(masters) != 4 || len(keys) != 4 {
		t.Fatalf("masters %v, keys %v", masters, keys)
	}
	for i, k := range keys {
		tag, _, _ := strings.Cut(strings.TrimPrefix(k, "{"), "}")
		slot := keySlot(tag)
		var owner string
		for _, sh := range shards {
			if servesSlot(sh.Slots, slot) {
				owner, _ = shardMaster(sh)
			}
		}
		if owner != masters[i] || !strings.HasSuffix(k, "}:ready:replica") {
			t.Errorf("key %q (slot %d) for master %s: the slot is %s's", k, slot, masters[i], owner)
		}
	}
}
