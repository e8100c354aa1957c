package cache

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lectern/lectern/storage"
)

// hashReplaceScript replaces a versioned hash in one atomic step, unless
// the hash is at the version or later, or holds fields added at a later
// version ('m': a refill read before they were committed must not drop
// them) (a script
// is replicated and persisted as one unit, so a replica or an AOF holds the
// old hash or the new one, never a mix). ARGV: version, ttl in ms, then
// field/value pairs, written in chunks: Lua's unpack takes at most a few
// thousand values.
const hashReplaceScript = `
local cur = redis.call('HGET', KEYS[1], 'v')
if cur and tonumber(cur) >= tonumber(ARGV[1]) then
  return 0
end
local added = redis.call('HGET', KEYS[1], 'm')
if added and tonumber(added) > tonumber(ARGV[1]) then
  return 0
end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'v', ARGV[1])
local i = 3
while i <= #ARGV do
  local j = math.min(i + 999, #ARGV)
  redis.call('HSET', KEYS[1], unpack(ARGV, i, j))
  i = j + 1
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`

// hashAddScript adds fields to an existing versioned hash, advances its
// version when it follows the hash's, and raises the highest version added
// ('m', storage.HashAddedField): ARGV: version (0: leave both), then
// field/value pairs.
const hashAddScript = `
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
local i = 2
while i <= #ARGV do
  local j = math.min(i + 999, #ARGV)
  redis.call('HSET', KEYS[1], unpack(ARGV, i, j))
  i = j + 1
end
local v = tonumber(ARGV[1])
local cur = tonumber(redis.call('HGET', KEYS[1], 'v'))
if v > 0 and cur and cur == v - 1 then
  redis.call('HSET', KEYS[1], 'v', ARGV[1])
end
local added = tonumber(redis.call('HGET', KEYS[1], 'm'))
if v > 0 and (not added or added < v) then
  redis.call('HSET', KEYS[1], 'm', ARGV[1])
end
return 1
`

// HashGet implements storage.Cache with HMGET.
func (r *Redis) HashGet(ctx context.Context, key string, fields ...string) ([][]byte, error) {
	if len(fields) == 0 {
		return [][]byte{}, nil
	}
	args := make([]any, 0, 2+len(fields))
	args = append(args, "hmget", r.key(key))
	for _, f := range fields {
		args = append(args, f)
	}
	cmd := redis.NewSliceCmd(ctx, args...)
	if err := r.run(ctx, r.readTimeout, cmd); err != nil {
		return nil, mapErr("HMGET", err)
	}
	return byteValues("HMGET", cmd.Val())
}

// HashReplace implements storage.Cache with one script.
func (r *Redis) HashReplace(ctx context.Context, key string, version int64, fields map[string][]byte, ttl time.Duration) (bool, error) {
	if err := checkTTL(ttl); err != nil {
		return false, err
	}
	if reservedHashField(fields) {
		return false, errors.New("cache: HashReplace: fields must not hold the version fields")
	}
	args := make([]any, 0, 2+2*len(fields))
	args = append(args, version, ceilMillis(ttl).Milliseconds())
	for f, v := range fields {
		args = append(args, f, v)
	}
	var n int64
	err := r.guard(ctx, r.opTimeout, func(ctx context.Context) error {
		var err error
		n, err = r.hreplace.Run(ctx, r.rdb, []string{r.key(key)}, args...).Int64()
		return err
	})
	if err != nil {
		return false, mapErr("hash replace", err)
	}
	return n == 1, nil
}

// HashAdd implements storage.Cache with one script.
func (r *Redis) HashAdd(ctx context.Context, key string, version int64, fields map[string][]byte) error {
	if len(fields) == 0 {
		return nil
	}
	if reservedHashField(fields) {
		return errors.New("cache: HashAdd: fields must not hold the version fields")
	}
	args := make([]any, 0, 1+2*len(fields))
	args = append(args, strconv.FormatInt(max(version, 0), 10))
	for f, v := range fields {
		args = append(args, f, v)
	}
	return mapErr("hash add", r.guard(ctx, r.opTimeout, func(ctx context.Context) error {
		return r.hadd.Run(ctx, r.rdb, []string{r.key(key)}, args...).Err()
	}))
}

// reservedHashField reports whether fields name a field the hash scripts
// keep themselves.
func reservedHashField(fields map[string][]byte) bool {
	_, v := fields[storage.HashVersionField]
	_, m := fields[storage.HashAddedField]
	return v || m
}
