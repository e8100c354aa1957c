package bearer

import (
	"crypto/ecdsa"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lectern/lectern/tenant"
)

// DefaultCacheEntries bounds the verified-token cache by default: at a few
// hundred bytes an entry, about 30 MB.
const DefaultCacheEntries = 100_000

const (
	// maxTokenShards spreads the verified-token cache over independently
	// locked maps, so that concurrent requests rarely wait for each other.
	maxTokenShards = 64
	// evictSample is how many entries an insertion into a full shard looks
	// at: expired ones among them go, or else the first one (Go randomises
	// map iteration, so that is a random entry). It bounds the work of one
	// insertion whatever the shard size.
	evictSample = 8
)

// verified is what the verified-token cache remembers of a token whose
// signature and claims checked out: enough to answer again without
// parsing or verifying, and to notice when the answer no longer holds.
type verified struct {
	tok *Token
	// site, iss and aud are the site's ID, issuer and resource the token
	// was verified against; a site whose origin changed no longer matches.
	site     tenant.ID
	iss, aud string
	// kid and pub are the key that verified the signature: a key the site
	// stopped publishing no longer vouches for the token.
	kid string
	pub *ecdsa.PublicKey
	// until is exp + skew: from then on the token is expired.
	until time.Time
}

// tokenCache maps SHA-256(raw token) to verified. It holds at most limit
// entries; expired ones are dropped when met.
type tokenCache struct {
	shards   []tokenShard
	mask     uint64
	perShard int

	// hits, misses and evictions feed the cache's hit-rate metric.
	hits, misses, evictions atomic.Uint64
}

type tokenShard struct {
	mu sync.RWMutex
	m  map[[32]byte]*verified
	_  [32]byte // keep shards on separate cache lines
}

// newTokenCache returns a cache of at most limit entries, or nil (no
// caching) when limit < 1.
func newTokenCache(limit int) *tokenCache {
	if limit < 1 {
		return nil
	}
	n := 1
	for n*2 <= maxTokenShards && n*2 <= limit {
		n *= 2
	}
	c := &tokenCache{shards: make([]tokenShard, n), mask: uint64(n - 1), perShard: limit / n}
	for i := range c.shards {
		c.shards[i].m = make(map[[32]byte]*verified)
	}
	return c
}

func (c *tokenCache) shard(key *[32]byte) *tokenShard {
	// The key is a SHA-256 output: any of its bytes is uniform.
	return &c.shards[uint64(key[0])&c.mask]
}

// get returns the live entry of key, or nil.
func (c *tokenCache) get(key *[32]byte, now time.Time) *verified {
	if c == nil {
		return nil
	}
	sh := c.shard(key)
	sh.mu.RLock()
	e := sh.m[*key]
	sh.mu.RUnlock()
	if e == nil {
		c.misses.Add(1)
		return nil
	}
	if !now.Before(e.until) {
		sh.mu.Lock()
		if sh.m[*key] == e {
			delete(sh.m, *key)
		}
		sh.mu.Unlock()
		c.misses.Add(1)
		return nil
	}
	c.hits.Add(1)
	return e
}

// put stores e under key, making room in a full shard first.
func (c *tokenCache) put(key *[32]byte, e *verified, now time.Time) {
	if c == nil {
		return
	}
	sh := c.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if _, ok := sh.m[*key]; !ok && len(sh.m) >= c.perShard {
		var first [32]byte
		seen, dropped := 0, false
		for k, v := range sh.m {
			if seen == 0 {
				first = k
			}
			if !now.Before(v.until) {
				delete(sh.m, k)
				dropped = true
			}
			if seen++; seen == evictSample {
				break
			}
		}
		if !dropped {
			delete(sh.m, first)
			c.evictions.Add(1)
		}
	}
	sh.m[*key] = e
}

// len counts the entries, expired ones included (for tests).
func (c *tokenCache) len() int {
	if c == nil {
		return 0
	}
	n := 0
	for i := range c.shards {
		sh := &c.shards[i]
		sh.mu.RLock()
		n += len(sh.m)
		sh.mu.RUnlock()
	}
	return n
}

// CacheStats counts look-ups of the verified-token cache.
type CacheStats struct {
	Hits, Misses, Evictions uint64
	Entries                 int
}

// CacheStats returns the verified-token cache's counters (zero when
// caching is off).
func (v *Verifier) CacheStats() CacheStats {
	c := v.tokens
	if c == nil {
		return CacheStats{}
	}
	return CacheStats{Hits: c.hits.Load(), Misses: c.misses.Load(), Evictions: c.evictions.Load(), Entries: c.len()}
}
