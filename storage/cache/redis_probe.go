package cache

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lectern/lectern/storage"
)

// ProbeWrite writes a short-lived key (expiring after ttl) on every server
// that takes writes: the server, or on a Cluster each master. A Redis at
// maxmemory with noeviction answers PING and refuses every write, and a
// Cluster's masters fill up each on its own: a sign-in fails when the one
// holding its site's keys is full, so readiness (internal/server) probes a
// write on each. id names the prober (a replica), so probes never collide.
func (r *Redis) ProbeWrite(ctx context.Context, id string, ttl time.Duration) error {
	if r.cluster == nil {
		return r.Set(ctx, storage.PlatformKey("ready", id), []byte("1"), ttl)
	}
	if err := checkTTL(ttl); err != nil {
		return err
	}
	return mapErr("SET", r.guard(ctx, r.opTimeout, func(ctx context.Context) error {
		shards, err := r.cluster.ClusterShards(ctx).Result()
		if err != nil {
			return err
		}
		masters, keys := probeKeys(shards, id)
		cmds, err := r.cluster.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, k := range keys {
				p.Set(ctx, r.key(k), "1", ceilMillis(ttl))
			}
			return nil
		})
		for i, c := range cmds {
			if c.Err() != nil {
				return fmt.Errorf("master %s: %w", masters[i], c.Err())
			}
		}
		return err
	}))
}

// probeKeys returns, for each master of shards (CLUSTER SHARDS), its
// address and a probe key whose hash tag falls in one of the slots it
// serves.
func probeKeys(shards []redis.ClusterShard, id string) (masters, keys []string) {
	for _, sh := range shards {
		addr, ok := shardMaster(sh)
		if !ok || len(sh.Slots) == 0 {
			continue
		}
		// A master serving a third of the slots takes a few tries; one
		// serving a single slot some 16,384 (well under a millisecond).
		for n := 0; n < 1<<20; n++ {
			tag := "ready" + strconv.Itoa(n)
			if servesSlot(sh.Slots, keySlot(tag)) {
				masters = append(masters, addr)
				keys = append(keys, "{"+tag+"}:ready:"+id)
				break
			}
		}
	}
	return masters, keys
}

// shardMaster is the address of a shard's master.
func shardMaster(sh redis.ClusterShard) (string, bool) {
	for _, n := range sh.Nodes {
		if n.Role == "master" {
			return net.JoinHostPort(cmp.Or(n.Endpoint, n.IP), strconv.FormatInt(n.Port, 10)), true
		}
	}
	return "", false
}

func servesSlot(ranges []redis.SlotRange, slot int) bool {
	for _, r := range ranges {
		if r.Start <= int64(slot) && int64(slot) <= r.End {
			return true
		}
	}
	return false
}

// keySlot is Redis Cluster's slot of a hash tag (or of a key without
// one): CRC16 (XMODEM) modulo 16384.
func keySlot(tag string) int {
	var crc uint16
	for i := 0; i < len(tag); i++ {
		crc ^= uint16(tag[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return int(crc % 16384)
}
