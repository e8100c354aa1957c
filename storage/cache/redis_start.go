package cache

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// checkStart is NewRedis' first contact: every node answers, and the URL's
// topology is the server's. Misconfigurations get errors that name them
// instead of the go-redis answer they cause later.
func (r *Redis) checkStart(ctx context.Context, t *redisTarget) error {
	if err := r.ping(ctx); err != nil {
		if t.topology == Sentinel && errors.Is(err, redis.Nil) {
			// GET-MASTER-ADDR-BY-NAME answers nil for a name the
			// sentinels do not monitor; as it is, "cache: miss".
			// go-redis words it "all sentinels ... are unreachable".
			return fmt.Errorf("cache: redis sentinels do not know master %q (check the master name in REDIS_URL)", t.failover.MasterName)
		}
		return mapErr("PING", err)
	}
	if t.topology != Single {
		return nil
	}
	// A Cluster node reached as one server answers only for its own
	// slots: every other key would fail with MOVED at run time.
	info, err := r.rdb.Info(ctx, "cluster").Result()
	var rerr redis.Error
	switch {
	case err != nil && errors.As(err, &rerr):
		return nil // INFO refused (a managed Redis): nothing to check
	case err != nil:
		return mapErr("INFO", err)
	}
	for _, line := range strings.Split(info, "\n") {
		if strings.TrimSpace(line) == "cluster_enabled:1" {
			return fmt.Errorf("cache: the Redis at %s is a Redis Cluster node; reach the Cluster with redis+cluster://host:port[,host:port...]", t.simple.Addr)
		}
	}
	return nil
}
