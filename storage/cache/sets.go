package cache

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"
)

// Sets are small indexes (a person's browser sessions across sites). On
// Redis they are Redis sets; SetAdd adds and renews the expiry in one
// script so that a set never lives on without one.

var setAddScript = redis.NewScript(`
redis.call('SADD', KEYS[1], unpack(ARGV, 2))
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1`)

// SetAdd implements storage.Cache.
func (r *Redis) SetAdd(ctx context.Context, key string, ttl time.Duration, members ...string) error {
	if err := checkTTL(ttl); err != nil || len(members) == 0 {
		return err
	}
	args := make([]any, 0, 1+len(members))
	args = append(args, ceilMillis(ttl).Milliseconds())
	for _, m := range members {
		args = append(args, m)
	}
	return mapErr("SADD", r.guard(ctx, r.opTimeout, func(ctx context.Context) error {
		return setAddScript.Run(ctx, r.rdb, []string{r.key(key)}, args...).Err()
	}))
}

// SetMembers implements storage.Cache.
func (r *Redis) SetMembers(ctx context.Context, key string) ([]string, error) {
	cmd := redis.NewStringSliceCmd(ctx, "smembers", r.key(key))
	if err := r.run(ctx, r.readTimeout, cmd); err != nil {
		return nil, mapErr("SMEMBERS", err)
	}
	out := cmd.Val()
	slices.Sort(out)
	return out, nil
}

// SetRemove implements storage.Cache.
func (r *Redis) SetRemove(ctx context.Context, key string, members ...string) error {
	if len(members) == 0 {
		return nil
	}
	args := make([]any, 0, 2+len(members))
	args = append(args, "srem", r.key(key))
	for _, m := range members {
		args = append(args, m)
	}
	return mapErr("SREM", r.run(ctx, r.opTimeout, redis.NewIntCmd(ctx, args...)))
}

// The in-memory twin keeps a set as an entry holding its sorted members.

func (m *Memory) setOf(key string, now time.Time) []string {
	e, ok := m.lookup(key, now)
	if !ok {
		return nil
	}
	var members []string
	_ = json.Unmarshal(e.value, &members)
	return members
}

// SetAdd implements storage.Cache.
func (m *Memory) SetAdd(ctx context.Context, key string, ttl time.Duration, members ...string) error {
	if err := checkTTL(ttl); err != nil || len(members) == 0 {
		return err
	}
	if err := m.begin(ctx); err != nil {
		return err
	}
	defer m.mu.Unlock()
	now := m.now()
	set := m.setOf(key, now)
	for _, s := range members {
		if !slices.Contains(set, s) {
			set = append(set, s)
		}
	}
	slices.Sort(set)
	b, _ := json.Marshal(set)
	m.entries[key] = entry{value: b, expires: now.Add(ttl)}
	return nil
}

// SetMembers implements storage.Cache.
func (m *Memory) SetMembers(ctx context.Context, key string) ([]string, error) {
	if err := m.begin(ctx); err != nil {
		return nil, err
	}
	defer m.mu.Unlock()
	return m.setOf(key, m.now()), nil
}

// SetRemove implements storage.Cache.
func (m *Memory) SetRemove(ctx context.Context, key string, members ...string) error {
	if err := m.begin(ctx); err != nil {
		return err
	}
	defer m.mu.Unlock()
	now := m.now()
	e, ok := m.lookup(key, now)
	if !ok {
		return nil
	}
	set := slices.DeleteFunc(m.setOf(key, now), func(s string) bool { return slices.Contains(members, s) })
	if len(set) == 0 {
		delete(m.entries, key)
		return nil
	}
	b, _ := json.Marshal(set)
	m.entries[key] = entry{value: b, expires: e.expires}
	return nil
}
