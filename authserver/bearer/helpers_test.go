package bearer

import (
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/lectern/lectern/authserver/keys"
	"github.com/lectern/lectern/internal/logtest"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/storage/cache"
	"github.com/lectern/lectern/storage/sqlstore"
	"github.com/lectern/lectern/storage/sqlstore/sqltest"
	"github.com/lectern/lectern/storage/storagetest"
	"github.com/lectern/lectern/tenant"
)

// errCacheDown is what testCache answers while it is down.
var errCacheDown = fmt.Errorf("test cache switched off: %w", storage.ErrUnavailable)

// testCache wraps a real cache so tests can switch it off (every call then
// fails with storage.ErrUnavailable, as a Redis that cannot be reached does),
// make chosen writes fail, and see the TTL of each replaced hash. It also
// records the keys written, so that Redis is cleaned up after the test.
type testCache struct {
	storage.Cache
	down atomic.Bool

	mu        sync.Mutex
	ttls      map[string]time.Duration // last TTL HashReplace wrote per key
	written   map[string]bool
	failWrite func(key string) bool

	// redisURL and prefix locate the keys on Redis (empty for memory).
	redisURL, prefix string
}

func newTestCache(c storage.Cache) *testCache {
	return &testCache{Cache: c, ttls: map[string]time.Duration{}, written: map[string]bool{}}
}

func (c *testCache) HashGet(ctx context.Context, key string, fields ...string) ([][]byte, error) {
	if c.down.Load() {
		return nil, errCacheDown
	}
	return c.Cache.HashGet(ctx, key, fields...)
}

func (c *testCache) Get(ctx context.Context, key string) ([]byte, error) {
	if c.down.Load() {
		return nil, errCacheDown
	}
	return c.Cache.Get(ctx, key)
}

// write records key and says whether the write must fail.
func (c *testCache) write(key string) error {
	if c.down.Load() {
		return errCacheDown
	}
	c.mu.Lock()
	fail := c.failWrite != nil && c.failWrite(key)
	c.written[key] = true
	c.mu.Unlock()
	if fail {
		return fmt.Errorf("test cache refuses to write %s: %w", key, storage.ErrUnavailable)
	}
	return nil
}

func (c *testCache) HashReplace(ctx context.Context, key string, version int64, fields map[string][]byte, ttl time.Duration) (bool, error) {
	if err := c.write(key); err != nil {
		return false, err
	}
	ok, err := c.Cache.HashReplace(ctx, key, version, fields, ttl)
	if err == nil && ok {
		c.mu.Lock()
		c.ttls[key] = ttl
		c.mu.Unlock()
	}
	return ok, err
}

func (c *testCache) HashAdd(ctx context.Context, key string, version int64, fields map[string][]byte) error {
	if err := c.write(key); err != nil {
		return err
	}
	return c.Cache.HashAdd(ctx, key, version, fields)
}

func (c *testCache) Set(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if err := c.write(key); err != nil {
		return err
	}
	return c.Cache.Set(ctx, key, value, ttl)
}

func (c *testCache) Delete(ctx context.Context, keys ...string) error {
	if c.down.Load() {
		return errCacheDown
	}
	return c.Cache.Delete(ctx, keys...)
}

func (c *testCache) setFailWrite(f func(key string) bool) {
	c.mu.Lock()
	c.failWrite = f
	c.mu.Unlock()
}

// ttl returns the TTL the last successful HashReplace of key wrote.
func (c *testCache) ttl(key string) (time.Duration, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d, ok := c.ttls[key]
	return d, ok
}

// flush deletes every key the test wrote, as a Redis restart would lose
// them.
func (c *testCache) flush(t testing.TB) {
	t.Helper()
	c.mu.Lock()
	keys := make([]string, 0, len(c.written))
	for k := range c.written {
		keys = append(keys, k)
	}
	c.mu.Unlock()
	if len(keys) == 0 {
		return
	}
	if err := c.Cache.Delete(context.Background(), keys...); err != nil {
		t.Fatalf("flushing the cache: %v", err)
	}
}

// state returns the site's revocation hash: its version (-1 when the hash
// is absent) and the values of fields (nil when missing).
func (c *testCache) state(t testing.TB, site tenant.ID, fields ...string) (int64, [][]byte) {
	t.Helper()
	vals, err := c.Cache.HashGet(context.Background(), stateKey(site), append([]string{storage.HashVersionField}, fields...)...)
	if err != nil {
		t.Fatalf("reading the revocation hash: %v", err)
	}
	if vals[0] == nil {
		return -1, vals[1:]
	}
	v, err := strconv.ParseInt(string(vals[0]), 10, 64)
	if err != nil {
		t.Fatalf("version %q", vals[0])
	}
	return v, vals[1:]
}

// newMemoryCache returns a fresh in-memory cache.
func newMemoryCache(t testing.TB) *testCache {
	m := cache.NewMemory(nil)
	t.Cleanup(func() { _ = m.Close() })
	return newTestCache(m)
}

// newRedisCache returns a Redis cache under a prefix of the test's own; the
// keys it wrote are deleted afterwards (never FLUSHDB: the Redis is shared).
func newRedisCache(t testing.TB) *testCache {
	t.Helper()
	url := storagetest.RedisURL(t)
	prefix := "lectern-test:bearer:" + rand.Text() + ":"
	r, err := cache.NewRedis(context.Background(), url, &cache.RedisOptions{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	c := newTestCache(r)
	c.redisURL, c.prefix = url, prefix
	t.Cleanup(func() {
		c.down.Store(false)
		c.flush(t)
		_ = r.Close()
	})
	return c
}

// env is two sites with key rings in one store, a cache and a verifier
// over them. The verifier reads the time package's clock: inside a synctest
// bubble (eachBackend) that clock stands still until the test sleeps, so
// TTLs and expiry are exact.
type env struct {
	store   *sqlstore.Store
	cache   *testCache
	keys    *keys.Manager
	v       *Verifier
	logs    *logtest.Buffer
	a, b    *tenant.Site
	userID  string
	options Options
}

var seq atomic.Int64

// newEnv builds an env; tweak, when not nil, adjusts the verifier's options.
func newEnv(t testing.TB, store *sqlstore.Store, c *testCache, tweak func(*Options)) *env {
	t.Helper()
	ctx := context.Background()
	kek := make([]byte, keys.KEKSize)
	_, _ = rand.Read(kek)
	km, err := keys.NewManager(store, kek, nil)
	if err != nil {
		t.Fatal(err)
	}
	logger, logs := logtest.New(t)
	e := &env{store: store, cache: c, keys: km, logs: logs}
	e.a = e.createSite(t, "a")
	e.b = e.createSite(t, "b")
	n := seq.Add(1)
	u := &storage.User{ID: fmt.Sprintf("usr_bearer%d_%s", n, rand.Text()[:8]), Email: fmt.Sprintf("bearer-%d-%s@example.test", n, strings.ToLower(rand.Text()[:8])), Name: "Bearer Test"}
	if err := store.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	e.userID = u.ID
	e.options = Options{Keys: km, Store: store, Cache: c, Logger: logger}
	if tweak != nil {
		tweak(&e.options)
	}
	e.v = New(e.options)
	return e
}

func (e *env) createSite(t testing.TB, label string) *tenant.Site {
	t.Helper()
	n := seq.Add(1)
	slug := fmt.Sprintf("bearer-%s-%d-%s", label, n, strings.ToLower(rand.Text()[:6]))
	s := &storage.Site{
		Slug:                slug,
		Name:                "Bearer " + label,
		Origin:              "https://" + slug + ".example.test",
		RegistrationVariant: tenant.VariantOpen,
	}
	if err := e.store.CreateSite(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if _, err := e.keys.CreateRing(context.Background(), s.ID); err != nil {
		t.Fatal(err)
	}
	return s.Tenant()
}

// eachBackend runs f in a synctest bubble on every store (SQLite,
// PostgreSQL) and cache (memory, Redis) pairing, each on a fresh database:
// everything the verifier uses is opened inside the bubble, so that no
// goroutine outside it touches the bubble's channels. Redis keeps real time:
// a key's TTL is checked as written, never by waiting for it to expire.
func eachBackend(t *testing.T, tweak func(*Options), f func(t *testing.T, e *env)) {
	forEachBackend(t, func(t *testing.T, run func(t *testing.T)) { synctest.Test(t, run) }, func(t *testing.T, e *env) {
		f(t, e)
		e.settle()
	}, tweak)
}

// eachBackendRealClock is eachBackend outside a bubble, for tests that run
// subtests (a bubble holds none) or whose goroutines never all block at once
// (a bubble's clock would not move, and the Redis client's batching waits
// for it).
func eachBackendRealClock(t *testing.T, tweak func(*Options), f func(t *testing.T, e *env)) {
	forEachBackend(t, func(t *testing.T, run func(t *testing.T)) { run(t) }, f, tweak)
}

// settle lets what the test started finish, as a bubble must before it
// ends.
func (e *env) settle() {
	e.cache.down.Store(false)
	synctest.Wait()
}

func forEachBackend(t *testing.T, in func(t *testing.T, run func(t *testing.T)), f func(t *testing.T, e *env), tweak func(*Options)) {
	for _, db := range []struct {
		name string
		open func(testing.TB) *sqlstore.Store
	}{{"sqlite", sqltest.SQLite}, {"postgres", sqltest.Postgres}} {
		t.Run(db.name, func(t *testing.T) {
			for _, c := range []struct {
				name string
				open func(testing.TB) *testCache
			}{{"memory", newMemoryCache}, {"redis", newRedisCache}} {
				t.Run(c.name, func(t *testing.T) {
					in(t, func(t *testing.T) { f(t, newEnv(t, db.open(t), c.open(t), tweak)) })
				})
			}
		})
	}
}

// quickEnv is an env on SQLite and the memory cache, for tests about
// parsing and answers rather than backends.
func quickEnv(t testing.TB, tweak func(*Options)) *env {
	return newEnv(t, sqltest.SQLite(t), newMemoryCache(t), tweak)
}

// grant creates a live grant of the env's user at site and returns its id.
func (e *env) grant(t testing.TB, site *tenant.Site) string {
	t.Helper()
	now := time.Now()
	g := &storage.Grant{
		ID:         "grt_" + randomHex(12),
		SiteID:     site.ID,
		ClientID:   "demo-member-app",
		UserID:     e.userID,
		Scopes:     []string{"openid", "account:read"},
		Resource:   site.Resource(),
		AuthTime:   now.Add(-time.Minute),
		CreatedAt:  now,
		ExpiresAt:  now.Add(90 * 24 * time.Hour),
		LastUsedAt: now,
	}
	h := sha256.Sum256([]byte(randomHex(32)))
	rt := &storage.RefreshToken{TokenHash: h[:], CreatedAt: now, ExpiresAt: now.Add(30 * 24 * time.Hour)}
	if err := e.store.CreateGrant(context.Background(), g, rt); err != nil {
		t.Fatal(err)
	}
	return g.ID
}

// claims returns valid claims of a token of site under grantID.
func (e *env) claims(site *tenant.Site, grantID string) Claims {
	now := time.Now()
	return Claims{
		Issuer:   site.Issuer(),
		Subject:  e.userID,
		Audience: site.Resource(),
		ClientID: "demo-member-app",
		Scope:    "openid account:read",
		JTI:      "jti_" + randomHex(16),
		IssuedAt: now.Unix(),
		Expiry:   now.Add(AccessTokenLifetime).Unix(),
		GrantID:  grantID,
		AuthTime: now.Add(-time.Minute).Unix(),
	}
}

// mint signs payload (Claims, or a map for claims Claims cannot express)
// with site's active key, as the authorization server does.
func (e *env) mint(t testing.TB, site *tenant.Site, payload any) string {
	t.Helper()
	b, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	sk, err := e.keys.SigningKey(context.Background(), site.ID)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := sk.Sign(b, TokenType)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// token mints a valid token of site under a fresh grant.
func (e *env) token(t testing.TB, site *tenant.Site) (string, Claims) {
	t.Helper()
	c := e.claims(site, e.grant(t, site))
	return e.mint(t, site, c), c
}

func (e *env) signingKey(t testing.TB, site *tenant.Site) *keys.SigningKey {
	t.Helper()
	sk, err := e.keys.SigningKey(context.Background(), site.ID)
	if err != nil {
		t.Fatal(err)
	}
	return sk
}

// compact builds a JWS in compact serialization by hand from any header
// and payload, signed by sign (nil: an empty signature).
func compact(t testing.TB, header map[string]any, payload any, sign func(input []byte) []byte) string {
	t.Helper()
	hb, err := json.Marshal(header)
	if err != nil {
		t.Fatal(err)
	}
	var pb []byte
	if s, ok := payload.(string); ok {
		pb = []byte(s)
	} else if pb, err = json.Marshal(payload); err != nil {
		t.Fatal(err)
	}
	input := base64.RawURLEncoding.EncodeToString(hb) + "." + base64.RawURLEncoding.EncodeToString(pb)
	var sig []byte
	if sign != nil {
		sig = sign([]byte(input))
	}
	return input + "." + base64.RawURLEncoding.EncodeToString(sig)
}

// es256 signs input as RFC 7518 §3.4 says: R || S, 32 bytes each.
func es256(t testing.TB, priv *ecdsa.PrivateKey) func(input []byte) []byte {
	return func(input []byte) []byte {
		d := sha256.Sum256(input)
		r, s, err := ecdsa.Sign(rand.Reader, priv, d[:])
		if err != nil {
			t.Fatal(err)
		}
		out := make([]byte, 64)
		r.FillBytes(out[:32])
		s.FillBytes(out[32:])
		return out
	}
}

// wantStatus checks that err is an *Error with status (0: no error).
func wantStatus(t testing.TB, err error, status int, what string) *Error {
	t.Helper()
	if status == 0 {
		if err != nil {
			t.Fatalf("%s: err = %v, want the token accepted", what, err)
		}
		return nil
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("%s: err = %v (%T), want a *bearer.Error with status %d", what, err, err, status)
	}
	if e.Status != status {
		t.Fatalf("%s: status %d (%v), want %d", what, e.Status, e, status)
	}
	return e
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// countingStore counts refills (RevokedGrants), per-request decisions
// (TokenRevoked) and version reads, and can hold each refill at a gate
// until the gate is closed.
type countingStore struct {
	Store
	refills, lookups, versionReads atomic.Int64
	gate                           chan struct{}
}

func (s *countingStore) RevokedGrants(ctx context.Context, site tenant.ID, since time.Time) ([]storage.RevokedGrant, error) {
	s.refills.Add(1)
	if s.gate != nil {
		<-s.gate
	}
	return s.Store.RevokedGrants(ctx, site, since)
}

func (s *countingStore) TokenRevoked(ctx context.Context, site tenant.ID, jti string) (bool, error) {
	s.lookups.Add(1)
	return s.Store.TokenRevoked(ctx, site, jti)
}

func (s *countingStore) RevocationVersions(ctx context.Context, sites []tenant.ID) (map[tenant.ID]int64, error) {
	s.versionReads.Add(1)
	return s.Store.RevocationVersions(ctx, sites)
}

// keySourceFunc adapts a function to KeySource.
type keySourceFunc func(ctx context.Context, site tenant.ID, kid string) (*ecdsa.PublicKey, error)

func (f keySourceFunc) PublicKey(ctx context.Context, site tenant.ID, kid string) (*ecdsa.PublicKey, error) {
	return f(ctx, site, kid)
}
