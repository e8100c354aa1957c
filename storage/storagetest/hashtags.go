package storagetest

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/lectern/lectern/storage"
)

// TagChecker is a storage.Cache that passes every call to the cache it
// wraps and records each key that has no Redis Cluster hash tag
// (storage.HashTag). On a Cluster such a key lands in a slot of its own,
// so a script or MGET that combines it with a site's keys fails, and a
// site's keys spread over the nodes. Tests wrap the cache of a whole
// server and fail on Untagged, which covers every key the code builds on
// the paths the tests drive.
type TagChecker struct {
	storage.Cache

	mu       sync.Mutex
	untagged []string
}

var _ storage.Cache = (*TagChecker)(nil)

// NewTagChecker wraps c.
func NewTagChecker(c storage.Cache) *TagChecker { return &TagChecker{Cache: c} }

// Unwrap returns the wrapped cache.
func (c *TagChecker) Unwrap() storage.Cache { return c.Cache }

// Untagged returns the keys without a hash tag seen so far, each once.
func (c *TagChecker) Untagged() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.untagged)
}

func (c *TagChecker) check(keys ...string) {
	for _, k := range keys {
		if _, ok := storage.HashTag(k); ok {
			continue
		}
		c.mu.Lock()
		if !slices.Contains(c.untagged, k) {
			c.untagged = append(c.untagged, k)
		}
		c.mu.Unlock()
	}
}

func (c *TagChecker) Get(ctx context.Context, key string) ([]byte, error) {
	c.check(key)
	return c.Cache.Get(ctx, key)
}

func (c *TagChecker) GetMulti(ctx context.Context, keys ...string) ([][]byte, error) {
	c.check(keys...)
	return c.Cache.GetMulti(ctx, keys...)
}

func (c *TagChecker) Set(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	c.check(key)
	return c.Cache.Set(ctx, key, value, ttl)
}

func (c *TagChecker) SetNX(ctx context.Context, key string, value []byte, ttl time.Duration) (bool, error) {
	c.check(key)
	return c.Cache.SetNX(ctx, key, value, ttl)
}

func (c *TagChecker) GetDel(ctx context.Context, key string) ([]byte, error) {
	c.check(key)
	return c.Cache.GetDel(ctx, key)
}

func (c *TagChecker) Delete(ctx context.Context, keys ...string) error {
	c.check(keys...)
	return c.Cache.Delete(ctx, keys...)
}

func (c *TagChecker) Incr(ctx context.Context, key string, ttl time.Duration) (int64, error) {
	c.check(key)
	return c.Cache.Incr(ctx, key, ttl)
}

func (c *TagChecker) Allow(ctx context.Context, key string, limit storage.Limit) (bool, time.Duration, error) {
	c.check(key)
	return c.Cache.Allow(ctx, key, limit)
}

func (c *TagChecker) AllowAtMost(ctx context.Context, key string, limit storage.Limit, n int) (int, time.Duration, error) {
	c.check(key)
	return c.Cache.AllowAtMost(ctx, key, limit, n)
}

func (c *TagChecker) HashGet(ctx context.Context, key string, fields ...string) ([][]byte, error) {
	c.check(key)
	return c.Cache.HashGet(ctx, key, fields...)
}

func (c *TagChecker) HashReplace(ctx context.Context, key string, version int64, fields map[string][]byte, ttl time.Duration) (bool, error) {
	c.check(key)
	return c.Cache.HashReplace(ctx, key, version, fields, ttl)
}

func (c *TagChecker) HashAdd(ctx context.Context, key string, version int64, fields map[string][]byte) error {
	c.check(key)
	return c.Cache.HashAdd(ctx, key, version, fields)
}
