package storage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/lectern/lectern/tenant"
)

// ErrCacheMiss: the key is absent (or expired).
var ErrCacheMiss = errors.New("cache: miss")

// Cache is the shared, expiring key-value store of authorization codes,
// browser sessions, CIMD documents, rate-limit counters and copies of
// revocation state (DESIGN §3, §4). Redis in production, an in-memory twin
// in the embedded default; both pass storagetest.RunCacheTests.
//
// Keys of site-owned data are hash-tagged per site (see CacheKey) so that a
// Redis Cluster keeps one site's keys together.
type Cache interface {
	// Get returns the value of key, or ErrCacheMiss.
	Get(ctx context.Context, key string) ([]byte, error)
	// GetMulti returns the values of keys in order, nil for each miss, in one
	// round trip.
	GetMulti(ctx context.Context, keys ...string) ([][]byte, error)
	// Set stores value under key for ttl (ttl > 0).
	Set(ctx context.Context, key string, value []byte, ttl time.Duration) error
	// SetNX stores value only if key is absent and reports whether it did.
	SetNX(ctx context.Context, key string, value []byte, ttl time.Duration) (bool, error)
	// GetDel atomically returns and removes key: of two concurrent callers,
	// exactly one gets the value, the other ErrCacheMiss.
	GetDel(ctx context.Context, key string) ([]byte, error)
	// Delete removes keys; absent keys are ignored.
	Delete(ctx context.Context, keys ...string) error
	// Incr adds one to the counter at key and returns the new value. A new
	// counter starts at 1 and expires after ttl; later increments keep that
	// expiry (a fixed window).
	Incr(ctx context.Context, key string, ttl time.Duration) (int64, error)
	// Publish broadcasts message on channel to every subscriber, in every
	// process sharing the cache.
	Publish(ctx context.Context, channel string, message []byte) error
	// Subscribe delivers the messages published on channel from now on
	// until ctx ends. Delivery is best effort: a subscriber that falls behind
	// may miss messages, so users keep a TTL as well. When the connection
	// is lost the channel is closed (messages published meanwhile are lost):
	// subscribe again and treat what was cached as stale.
	Subscribe(ctx context.Context, channel string) (<-chan []byte, error)
	// SetAdd adds members to the set at key and makes the set expire after
	// ttl (from now, whatever it was before).
	SetAdd(ctx context.Context, key string, ttl time.Duration, members ...string) error
	// SetMembers returns the members of the set at key (none when absent).
	SetMembers(ctx context.Context, key string) ([]string, error)
	// SetRemove removes members from the set at key.
	SetRemove(ctx context.Context, key string, members ...string) error
	// Allow applies a rate limit: it reports whether one more event under key
	// is within limit and, if not, how long until one is.
	Allow(ctx context.Context, key string, limit Limit) (ok bool, retryAfter time.Duration, err error)
	// AllowAtMost takes up to n events under key within limit at once and
	// reports how many it took (the same budget Allow draws on); when it
	// took none, retryAfter is how long until one is within limit.
	AllowAtMost(ctx context.Context, key string, limit Limit, n int) (taken int, retryAfter time.Duration, err error)
	// HashGet returns the values of fields of the hash at key, in order,
	// nil for each missing field: all nil when the hash is absent.
	HashGet(ctx context.Context, key string, fields ...string) ([][]byte, error)
	// HashReplace replaces the hash at key, in one atomic step, by fields
	// and HashVersionField = version, expiring after ttl, unless the hash
	// already holds a version of at least version, or fields HashAdd added
	// with a version above version (HashAddedField): then it leaves the
	// hash alone and reports false. So a replacement read before a later
	// version was committed never drops that version's fields. Eviction
	// and failover lose such a hash whole or lose its latest writes
	// together with their versions, never one field alone.
	HashReplace(ctx context.Context, key string, version int64, fields map[string][]byte, ttl time.Duration) (bool, error)
	// HashAdd adds fields to the hash at key if it exists (an absent hash
	// stays absent; its expiry is kept) and, when version > 0 and the
	// hash's version is version-1, advances it to version: in one atomic
	// step, so the version never claims a field that is not there. It
	// raises HashAddedField to version when that is higher.
	HashAdd(ctx context.Context, key string, version int64, fields map[string][]byte) error
	// Ping reports whether the cache answers.
	Ping(ctx context.Context) error
	Close() error
}

// Limit is a rate: Rate events per Period, with bursts up to Burst.
type Limit struct {
	Rate   int
	Period time.Duration
	Burst  int
}

// HashVersionField is the field of a hash that holds its version (see
// Cache.HashReplace).
const HashVersionField = "v"

// HashAddedField is the field of a hash that holds the highest version
// HashAdd added fields of: a replacement at a lower version would drop
// them, and is refused (see Cache.HashReplace).
const HashAddedField = "m"

// CacheKey builds a cache key for data owned by a site. The braces are a
// Redis Cluster hash tag: every key of one site lands in one slot.
func CacheKey(site tenant.ID, kind, id string) string {
	return "{s" + strconv.FormatInt(int64(site), 10) + "}:" + kind + ":" + id
}

// PlatformKey builds a cache key for data owned by no site (the platform's
// own, or a replica's). The fixed hash tag keeps such keys out of every
// site's slot and lets multi-key operations on them share one slot.
func PlatformKey(kind, id string) string {
	return PlatformTag + ":" + kind + ":" + id
}

// PlatformTag is the hash tag of PlatformKey.
const PlatformTag = "{platform}"

// HashTag returns the Redis Cluster hash tag of key (what Redis hashes to
// pick the slot: the text between the first '{' and the next '}', when not
// empty) and whether key has one.
func HashTag(key string) (string, bool) {
	open := strings.IndexByte(key, '{')
	if open < 0 {
		return "", false
	}
	end := strings.IndexByte(key[open+1:], '}')
	if end <= 0 {
		return "", false
	}
	return key[open+1 : open+1+end], true
}

// ProfileKey is the cache key of a user's claims at a site. Whoever changes
// a user or their roles deletes it.
func ProfileKey(site tenant.ID, userID string) string { return CacheKey(site, "profile", userID) }

// ConsentKey is the cache key of the scopes a user approved for a client
// at a site (remembered consent). Whoever changes the consent deletes it.
func ConsentKey(site tenant.ID, userID, clientID string) string {
	sum := sha256.Sum256([]byte(clientID)) // client IDs may be long URLs
	return CacheKey(site, "consent", userID+":"+hex.EncodeToString(sum[:16]))
}

// RolesKey is the cache key of a user's roles at a site.
func RolesKey(site tenant.ID, userID string) string { return CacheKey(site, "roles", userID) }

// AccountKey builds a cache key for data about a platform-wide account
// (sign-in failures): accounts are not per site, so the hash tag is the
// account's, never a site's. The e-mail address is hashed (after case
// folding), so keys reveal no address, and one account's keys share a
// Redis Cluster slot while accounts spread over all of them.
func AccountKey(email, kind, id string) string {
	sum := sha256.Sum256([]byte("lectern-account:" + strings.ToLower(strings.TrimSpace(email))))
	return "{a" + hex.EncodeToString(sum[:12]) + "}:" + kind + ":" + id
}

// AddressKey builds a cache key for data about a client address seen at
// every site (sign-in failures from one IP across accounts); its hash tag
// is the address's.
func AddressKey(ip, kind string) string {
	return "{ip" + ip + "}:" + kind
}
