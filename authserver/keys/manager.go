package keys

import (
	"cmp"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"golang.org/x/sync/singleflight"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// Alg is the only signing algorithm of site keys (DESIGN §4).
const Alg = string(jose.ES256)

// Defaults of Options.
const (
	// DefaultPrePublish is how long a rotated key is published before it
	// signs, so that verifiers caching the JWKS learn it first.
	DefaultPrePublish = time.Hour
	// DefaultRetain is how long a retired key stays published: access tokens
	// live 1 h and id_tokens 10 min (DESIGN §10), plus clock skew and the
	// ring cache TTL of replicas that notice a rotation late.
	DefaultRetain = 70 * time.Minute
	// DefaultCacheTTL bounds how stale a replica's view of a ring can be
	// when it missed an invalidation broadcast.
	DefaultCacheTTL = time.Minute
)

const (
	// loadTimeout bounds one shared ring load. The load runs detached from
	// the context of the caller that started it, because other callers wait
	// on the same load.
	loadTimeout = 10 * time.Second
	// unknownKIDReload: a kid the cached ring does not know triggers one
	// reload if the ring is at least this old. A token signed on another
	// replica right after an immediate rotation verifies at once, while
	// random kids cannot make a site hit the store more than once per period.
	unknownKIDReload = 5 * time.Second
	// shardCount spreads the ring cache over independently locked maps.
	shardCount = 64
)

// Options tunes a Manager. A nil *Options means defaults.
type Options struct {
	// PrePublish is how long a key added by Rotate (with a negative
	// activateIn) is published before it signs. Default 1h.
	PrePublish time.Duration
	// Retain is how long a retired key stays in the JWKS. Default 70m.
	Retain time.Duration
	// CacheTTL is how long a site's ring is served from memory before it is
	// re-read; a pending key's activation and a retired key's expiry
	// shorten it. Default 1m.
	CacheTTL time.Duration
	// Logger receives key transitions and failures to persist them. Default:
	// discard.
	Logger *slog.Logger
	// PreviousKEKs are key-encryption keys that sealed rows before the
	// current one: rows sealed under them still open (during a KEK
	// rotation, until `lectern kek rotate` re-sealed them all).
	PreviousKEKs [][]byte
	// RotationPeriod is how long a key signs before the scheduler replaces
	// it, unless a site overrides it; it sets each new key's RotateAt.
	// Default 90 days.
	RotationPeriod time.Duration
	// MaxRings bounds the rings kept in memory; beyond it the least
	// recently used (approximately) is dropped. Default 100,000.
	MaxRings int
}

// DefaultMaxRings is the default of Options.MaxRings.
const DefaultMaxRings = 100_000

// Manager keeps the key rings of all sites: it creates and rotates keys and
// serves the signing key, public keys and JWKS of each site from a per-site
// in-process cache. It is safe for concurrent use.
//
// Public keys are not sealed, so when a site's private key cannot be opened
// (for example under the wrong key-encryption key) SigningKey fails with a
// *CorruptKeyError while PublicKey and JWKS keep working: tokens issued
// before the fault still verify, and nothing new gets signed. A row whose
// public JWK is unusable fails the JWKS (a partial key set would make
// verifiers drop a key they may still need) and PublicKey for that kid.
type Manager struct {
	store      storage.KeyStore
	sealer     *Sealer
	prePublish time.Duration
	retain     time.Duration
	ttl        time.Duration
	period     time.Duration
	log        *slog.Logger

	shards [shardCount]shard
	loads  singleflight.Group
	// lastSweep is the UnixNano of the last eviction pass over idle rings.
	lastSweep atomic.Int64
	// perShard bounds each shard's rings (MaxRings / shardCount).
	perShard int

	hits, misses, evictions atomic.Uint64
}

// CacheStats counts ring look-ups, for the cache's hit-rate metrics.
type CacheStats struct {
	// Hits were served from memory, Misses loaded from the store.
	Hits, Misses, Evictions uint64
	Entries                 int
}

// Stats returns the ring cache's counters since the Manager was made.
func (m *Manager) Stats() CacheStats {
	n := 0
	for i := range m.shards {
		sh := &m.shards[i]
		sh.mu.RLock()
		n += len(sh.rings)
		sh.mu.RUnlock()
	}
	return CacheStats{Hits: m.hits.Load(), Misses: m.misses.Load(), Evictions: m.evictions.Load(), Entries: n}
}

type shard struct {
	mu    sync.RWMutex
	rings map[tenant.ID]*ring
	// gen changes on every Invalidate in the shard, so that a load which
	// read the store before the invalidation does not cache its result.
	gen uint64
}

// NewManager returns a Manager over store whose private keys are sealed
// under kek (32 bytes, see LoadKEK).
func NewManager(store storage.KeyStore, kek []byte, opts *Options) (*Manager, error) {
	if store == nil {
		return nil, errors.New("keys: NewManager needs a key store")
	}
	if opts == nil {
		opts = &Options{}
	}
	sealer, err := NewSealer(kek, opts.PreviousKEKs...)
	if err != nil {
		return nil, err
	}
	if opts.PrePublish < 0 || opts.Retain < 0 || opts.CacheTTL < 0 || opts.MaxRings < 0 || opts.RotationPeriod < 0 {
		return nil, errors.New("keys: Options durations must not be negative")
	}
	m := &Manager{
		store:      store,
		sealer:     sealer,
		prePublish: orDefault(opts.PrePublish, DefaultPrePublish),
		retain:     orDefault(opts.Retain, DefaultRetain),
		ttl:        orDefault(opts.CacheTTL, DefaultCacheTTL),
		log:        opts.Logger,
		perShard:   max(1, cmp.Or(opts.MaxRings, DefaultMaxRings)/shardCount),
		period:     orDefault(opts.RotationPeriod, DefaultRotationPeriod),
	}
	if m.log == nil {
		m.log = slog.New(slog.DiscardHandler)
	}
	for i := range m.shards {
		m.shards[i].rings = make(map[tenant.ID]*ring)
	}
	return m, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// CreateRing gives a new site its first key, active at once. A site that
// already has an active or next key is ErrRingExists.
func (m *Manager) CreateRing(ctx context.Context, site tenant.ID) (*storage.SiteKey, error) {
	now := time.Now()
	rows, err := m.store.SiteKeys(ctx, site, now)
	if err != nil {
		return nil, fmt.Errorf("keys: site %d: %w", site, err)
	}
	for _, k := range rows {
		if k.State == storage.KeyActive || k.State == storage.KeyNext {
			return nil, ErrRingExists
		}
	}
	k, err := m.newKey(site, storage.KeyActive, now, now)
	if err != nil {
		return nil, err
	}
	if err := m.store.CreateSiteKey(ctx, k); err != nil {
		return nil, fmt.Errorf("keys: site %d: create key: %w", site, err)
	}
	m.Invalidate(site)
	return k, nil
}

// Rotate adds a "next" key to the site's ring that starts signing after
// activateIn: a negative activateIn means the PrePublish delay, 0 means at
// once. When it activates, the key that signed until then is retired and
// stays published for Retain. It refuses (ErrWrongKEK) to seal a key for a
// site whose ring the configured key-encryption keys did not seal.
func (m *Manager) Rotate(ctx context.Context, site tenant.ID, activateIn time.Duration) (*storage.SiteKey, error) {
	if activateIn < 0 {
		activateIn = m.prePublish
	}
	// A key sealed under a KEK the other replicas do not hold would take
	// the site's signing down once it activates.
	if err := m.CheckKEK(ctx, site); err != nil {
		return nil, err
	}
	now := time.Now()
	k, err := m.newKey(site, storage.KeyNext, now, now.Add(activateIn))
	if err != nil {
		return nil, err
	}
	if err := m.store.CreateSiteKey(ctx, k); err != nil {
		return nil, fmt.Errorf("keys: site %d: create key: %w", site, err)
	}
	m.Invalidate(site)
	if activateIn == 0 {
		// Load the ring now so the promotion is persisted before we answer;
		// if this fails, the next load anywhere persists it.
		if r, err := m.ring(ctx, site); err == nil && r.signerRow != nil && r.signerRow.KID == k.KID {
			k.State = storage.KeyActive
		}
	}
	m.log.LogAttrs(ctx, slog.LevelInfo, "signing key added", slog.Int64("site", int64(site)),
		slog.String("kid", k.KID), slog.Time("activates_at", k.ActivatesAt))
	return k, nil
}

// newKey generates a P-256 key. Its kid is the RFC 7638 JWK thumbprint
// (SHA-256, base64url) of the public key; the private key is sealed as
// PKCS #8 DER, bound to site and kid.
func (m *Manager) newKey(site tenant.ID, state string, now, activatesAt time.Time) (*storage.SiteKey, error) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("keys: generate: %w", err)
	}
	jwk := jose.JSONWebKey{Key: &priv.PublicKey, Algorithm: Alg, Use: "sig"}
	tp, err := jwk.Thumbprint(crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("keys: thumbprint: %w", err)
	}
	jwk.KeyID = base64.RawURLEncoding.EncodeToString(tp)
	pub, err := jwk.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("keys: public JWK: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, fmt.Errorf("keys: PKCS #8: %w", err)
	}
	sealed, err := m.sealer.Seal(site, jwk.KeyID, der)
	clear(der)
	if err != nil {
		return nil, err
	}
	rotateAt := RotationDue(site, activatesAt, m.period).UTC()
	return &storage.SiteKey{
		SiteID:        site,
		KID:           jwk.KeyID,
		Alg:           Alg,
		PublicJWK:     string(pub),
		SealedPrivate: sealed,
		State:         state,
		ActivatesAt:   activatesAt.UTC(),
		RotateAt:      &rotateAt,
		CreatedAt:     now.UTC(),
	}, nil
}

// SigningKey returns the site's active key. A site without one is
// ErrNoSigningKey; an active key that does not open is *CorruptKeyError.
// The returned key is shared and must not be modified.
func (m *Manager) SigningKey(ctx context.Context, site tenant.ID) (*SigningKey, error) {
	r, err := m.ring(ctx, site)
	if err != nil {
		return nil, err
	}
	sk, err := m.signingKey(site, r)
	if err != nil {
		return nil, err
	}
	if sk == nil {
		return nil, ErrNoSigningKey
	}
	return sk, nil
}

// PublicKey returns the published key kid of site (active, next, or
// retired within Retain); any other kid is ErrUnknownKey. The returned key
// is shared and must not be modified.
func (m *Manager) PublicKey(ctx context.Context, site tenant.ID, kid string) (*ecdsa.PublicKey, error) {
	r, err := m.ring(ctx, site)
	if err != nil {
		return nil, err
	}
	if k, ok := r.public[kid]; ok {
		return k.pub, k.err
	}
	if time.Since(r.loadedAt) < unknownKIDReload {
		return nil, ErrUnknownKey
	}
	if r, err = m.reload(ctx, site, r); err != nil {
		return nil, err
	}
	if k, ok := r.public[kid]; ok {
		return k.pub, k.err
	}
	return nil, ErrUnknownKey
}

// JWKS returns the site's JSON Web Key Set (RFC 7517 §5): its active, next
// and recently retired public keys, serialized once per ring load. The
// returned slice is shared and must not be modified.
func (m *Manager) JWKS(ctx context.Context, site tenant.ID) ([]byte, error) {
	r, err := m.ring(ctx, site)
	if err != nil {
		return nil, err
	}
	return r.jwks, r.jwksErr
}

// Invalidate drops the cached ring of site, so the next use re-reads it.
// It is called after a rotation, here or (through a broadcast) on another
// replica.
func (m *Manager) Invalidate(site tenant.ID) {
	sh := m.shard(site)
	sh.mu.Lock()
	sh.gen++
	delete(sh.rings, site)
	sh.mu.Unlock()
	// A load already in flight read the store before the change; callers
	// from now on start a new one instead of joining it.
	m.loads.Forget(flightKey(site))
}

// InvalidateAll drops every cached ring, as Invalidate does for one site:
// what a replica does when it may have missed broadcasts (a gap in its
// subscription). A load already in flight does not cache what it read.
func (m *Manager) InvalidateAll() {
	for i := range m.shards {
		sh := &m.shards[i]
		sh.mu.Lock()
		sh.gen++
		clear(sh.rings)
		sh.mu.Unlock()
	}
}

// makeRoom drops rings until one more fits under limit: of a sample of
// eight (map iteration starts at a random place), the least recently used.
// It returns how many it dropped. The caller holds sh.mu.
func (sh *shard) makeRoom(limit int) int {
	n := 0
	for len(sh.rings) >= limit {
		var (
			victim tenant.ID
			oldest int64
			k      int
		)
		for id, r := range sh.rings {
			if u := r.used.Load(); k == 0 || u < oldest {
				victim, oldest = id, u
			}
			if k++; k == 8 {
				break
			}
		}
		delete(sh.rings, victim)
		n++
	}
	return n
}

func (m *Manager) shard(site tenant.ID) *shard {
	return &m.shards[uint64(site)%shardCount]
}

func flightKey(site tenant.ID) string { return strconv.FormatInt(int64(site), 10) }

// ring returns the cached ring of site, loading it when absent or expired.
func (m *Manager) ring(ctx context.Context, site tenant.ID) (*ring, error) {
	sh := m.shard(site)
	sh.mu.RLock()
	r := sh.rings[site]
	sh.mu.RUnlock()
	if r != nil && time.Now().Before(r.expires) {
		r.used.Store(time.Now().UnixNano())
		m.hits.Add(1)
		return r, nil
	}
	m.misses.Add(1)
	return m.reload(ctx, site, r)
}

// reload loads the ring of site once for all concurrent callers. stale is
// the ring the caller found unusable (or nil); a fresher ring cached in the
// meantime is returned without a store read.
func (m *Manager) reload(ctx context.Context, site tenant.ID, stale *ring) (*ring, error) {
	ch := m.loads.DoChan(flightKey(site), func() (any, error) {
		sh := m.shard(site)
		sh.mu.RLock()
		cur, gen := sh.rings[site], sh.gen
		sh.mu.RUnlock()
		if cur != nil && cur != stale && time.Now().Before(cur.expires) {
			return cur, nil
		}
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), loadTimeout)
		defer cancel()
		return m.load(lctx, site, cur, gen)
	})
	select {
	case res := <-ch:
		if res.Err != nil {
			return nil, res.Err
		}
		return res.Val.(*ring), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// load reads the site's keys, persists the transitions the clock has made
// due, builds the ring and caches it unless the site was invalidated since
// gen was read.
func (m *Manager) load(ctx context.Context, site tenant.ID, prev *ring, gen uint64) (*ring, error) {
	now := time.Now()
	rows, err := m.store.SiteKeys(ctx, site, now.Add(-m.retain))
	if err != nil {
		return nil, fmt.Errorf("keys: load key ring of site %d: %w", site, err)
	}
	p := resolve(rows, now, m.retain)
	m.persist(ctx, site, p)
	r := m.build(site, now, p, prev)

	sh := m.shard(site)
	r.used.Store(now.UnixNano())
	sh.mu.Lock()
	if sh.gen == gen {
		if _, ok := sh.rings[site]; !ok {
			m.evictions.Add(uint64(sh.makeRoom(m.perShard)))
		}
		sh.rings[site] = r
	}
	sh.mu.Unlock()
	m.sweep(now)
	return r, nil
}

// persist records promotions and retirements. Every replica computes the
// same transitions with the same timestamps, so writing them twice is
// harmless; a failure is logged and retried by the next load, and the
// in-memory ring is right either way.
func (m *Manager) persist(ctx context.Context, site tenant.ID, p *plan) {
	if p.promote != nil {
		k := p.promote
		if err := m.store.SetSiteKeyState(ctx, site, k.KID, storage.KeyActive, k.ActivatesAt); err != nil {
			m.log.LogAttrs(ctx, slog.LevelWarn, "persisting key activation failed", slog.Int64("site", int64(site)),
				slog.String("kid", k.KID), slog.String("error", err.Error()))
		} else {
			m.log.LogAttrs(ctx, slog.LevelInfo, "signing key activated", slog.Int64("site", int64(site)), slog.String("kid", k.KID))
		}
	}
	for _, k := range p.retire {
		if err := m.store.SetSiteKeyState(ctx, site, k.KID, storage.KeyRetired, *k.RetiredAt); err != nil {
			m.log.LogAttrs(ctx, slog.LevelWarn, "persisting key retirement failed", slog.Int64("site", int64(site)),
				slog.String("kid", k.KID), slog.String("error", err.Error()))
		} else {
			m.log.LogAttrs(ctx, slog.LevelInfo, "signing key retired", slog.Int64("site", int64(site)), slog.String("kid", k.KID))
		}
	}
}

// sweep evicts rings nobody asked for in 10 cache periods, so memory follows
// the sites in use rather than every site ever served. It runs at most once
// per CacheTTL, on the load path.
func (m *Manager) sweep(now time.Time) {
	last := m.lastSweep.Load()
	if now.UnixNano()-last < int64(m.ttl) || !m.lastSweep.CompareAndSwap(last, now.UnixNano()) {
		return
	}
	cutoff := now.Add(-10 * m.ttl)
	for i := range m.shards {
		sh := &m.shards[i]
		sh.mu.Lock()
		for id, r := range sh.rings {
			if r.expires.Before(cutoff) {
				delete(sh.rings, id)
			}
		}
		sh.mu.Unlock()
	}
}
