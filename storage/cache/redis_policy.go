package cache

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/redis/go-redis/v9"
)

// checkPolicy reads maxmemory-policy (on every master of a Cluster) and
// refuses an evicting one unless allowed. A Redis that forbids CONFIG
// (managed services often do) is accepted with a warning: its policy is
// "unknown".
func (r *Redis) checkPolicy(ctx context.Context, allowEviction bool) error {
	policies := map[string]bool{}
	var mu sync.Mutex // ForEachMaster asks the masters concurrently
	read := func(ctx context.Context, c redis.Cmdable) error {
		res, err := c.ConfigGet(ctx, "maxmemory-policy").Result()
		if err != nil {
			return err
		}
		if p, ok := res["maxmemory-policy"]; ok {
			mu.Lock()
			policies[p] = true
			mu.Unlock()
		}
		return nil
	}
	var err error
	if r.cluster != nil {
		err = r.cluster.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error { return read(ctx, c) })
	} else {
		err = read(ctx, r.rdb)
	}
	var rerr redis.Error
	switch {
	case err != nil && errors.As(err, &rerr):
		r.policy = "unknown"
		r.log.Warn("cannot read Redis' maxmemory-policy (CONFIG refused); make sure it is noeviction", "err", err)
		return nil
	case err != nil:
		return mapErr("CONFIG GET", err)
	}
	r.policy = "noeviction"
	for p := range policies {
		if p != "noeviction" {
			r.policy = p
		}
	}
	if len(policies) == 0 {
		r.policy = "unknown"
		r.log.Warn("Redis did not report its maxmemory-policy; make sure it is noeviction")
	}
	if r.policy != "noeviction" && r.policy != "unknown" && !allowEviction {
		return fmt.Errorf("%w: it is %q, so a full Redis drops sessions, codes and rate-limit state at random; run it with noeviction, or allow eviction explicitly", ErrEvictingPolicy, r.policy)
	}
	return nil
}
