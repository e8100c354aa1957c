package bearer

import (
	"context"
	"crypto/ecdsa"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/lectern/lectern/authserver/keys"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// KeySource returns a site's published public key kid. A kid the site does
// not publish is an error wrapping keys.ErrUnknownKey (the token is
// refused, 401); any other error (a *keys.CorruptKeyError, the store being
// down) means the answer is unknown (503). *keys.Manager implements it.
type KeySource interface {
	PublicKey(ctx context.Context, site tenant.ID, kid string) (*ecdsa.PublicKey, error)
}

var _ KeySource = (*keys.Manager)(nil)

// Store is the part of storage.GrantStore that holds revocation state: the
// durable decision that the cache copies, and the per-site versions that
// say whether a copy is complete.
type Store interface {
	GrantByID(ctx context.Context, site tenant.ID, id string) (*storage.Grant, error)
	RevokeGrant(ctx context.Context, site tenant.ID, id string, now time.Time) (int64, error)
	RevokedGrants(ctx context.Context, site tenant.ID, since time.Time) ([]storage.RevokedGrant, error)
	RevokeToken(ctx context.Context, t *storage.RevokedToken) (int64, error)
	RevokedTokens(ctx context.Context, site tenant.ID, now time.Time) ([]storage.RevokedToken, error)
	TokenRevoked(ctx context.Context, site tenant.ID, jti string) (bool, error)
	VersionStore
}

var _ Store = (storage.GrantStore)(nil)

// Options configures New. Keys, Store and Cache are required.
type Options struct {
	// Keys verifies signatures: the sites' published keys.
	Keys KeySource
	// Store decides revocation.
	Store Store
	// Cache holds the revocation copies (Redis, shared by all replicas, or
	// the in-memory cache of the embedded default).
	Cache storage.Cache
	// Skew is the clock skew tolerated on exp and iat. Zero (or negative)
	// means DefaultSkew.
	Skew time.Duration
	// Logger receives degraded operation (cache down, copies not written)
	// and the causes of 503s. Default: discard.
	Logger *slog.Logger
	// CacheEntries bounds the verified-token cache. Zero means
	// DefaultCacheEntries; negative disables it.
	CacheEntries int
	// PollInterval is how often Run reads the revocation versions of the
	// sites served recently. Zero means DefaultPollInterval.
	PollInterval time.Duration
}

// Verifier verifies the access tokens of every site and keeps their
// revocation state. It is safe for concurrent use.
type Verifier struct {
	keys  KeySource
	store Store
	cache storage.Cache
	skew  time.Duration
	log   *slog.Logger

	tokens   *tokenCache
	refills  singleflight.Group
	versions *versionBook
	local    *localSets
	poll     time.Duration
	// lastDegradedLog is the UnixNano of the last "cache unavailable" log,
	// so an outage logs a line every few seconds, not one per request.
	lastDegradedLog atomic.Int64
}

// New returns a Verifier. It panics when Keys, Store or Cache is nil: that
// is a wiring mistake, and a verifier without them could only fail.
func New(o Options) *Verifier {
	if o.Keys == nil || o.Store == nil || o.Cache == nil {
		panic("bearer: New needs Options.Keys, Options.Store and Options.Cache")
	}
	v := &Verifier{keys: o.Keys, store: o.Store, cache: o.Cache, skew: o.Skew, log: o.Logger}
	if v.skew <= 0 {
		v.skew = DefaultSkew
	}
	if v.log == nil {
		v.log = slog.New(slog.DiscardHandler)
	}
	n := o.CacheEntries
	if n == 0 {
		n = DefaultCacheEntries
	}
	v.tokens = newTokenCache(n)
	v.versions = newVersionBook(o.Store)
	v.local = newLocalSets()
	v.poll = o.PollInterval
	if v.poll <= 0 {
		v.poll = DefaultPollInterval
	}
	return v
}

// Run keeps the revocation versions of the sites this replica serves
// current, reading them all in one query every PollInterval, until ctx
// ends. Without it a site's version is read on demand, at most every few
// seconds per site (versionMaxAge).
func (v *Verifier) Run(ctx context.Context) {
	t := time.NewTicker(v.poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		pctx, cancel := context.WithTimeout(ctx, refillTimeout)
		if err := v.versions.poll(pctx); err != nil && ctx.Err() == nil {
			v.logDegraded(pctx, "revocation versions not read; using the last ones known", "err", err)
		}
		cancel()
		v.local.sweep(time.Now())
	}
}

// Authenticate verifies the bearer token of r (TokenFromHeader) at the
// request's site (tenant.FromContext). Errors are *Error: write them with
// WriteError. errors.Is(err, ErrNoToken) tells a request without a token
// from one with a bad token.
func (v *Verifier) Authenticate(r *http.Request) (*Token, error) {
	site, ok := tenant.FromContext(r.Context())
	if !ok {
		return nil, errNoSite()
	}
	raw, err := TokenFromHeader(r.Header)
	if err != nil {
		return nil, err
	}
	return v.Verify(r.Context(), site, raw)
}

// Verify checks that raw is an access token of site (RFC 9068 §4) that has
// not been revoked, and returns its claims. Every error is an *Error: 401
// invalid_token when the token is refused, 503 temporarily_unavailable when
// the site's keys or the revocation state cannot be read. It fails closed:
// no answer is ever "valid" unless every check passed.
//
// Signature and claims are checked once per token and remembered (keyed by
// the token's SHA-256) until the token expires, as long as its key is still
// published and the site's issuer unchanged; revocation is checked on every
// call.
func (v *Verifier) Verify(ctx context.Context, site *tenant.Site, raw string) (*Token, error) {
	if site == nil {
		return nil, errNoSite()
	}
	now := time.Now()
	if len(raw) == 0 || len(raw) > maxTokenBytes {
		return nil, InvalidToken(descMalformed)
	}
	key := sha256.Sum256([]byte(raw))
	var tok *Token
	if e := v.tokens.get(&key, now); e != nil && e.site == site.ID && e.iss == site.Issuer() && e.aud == site.Resource() {
		pub, err := v.publicKey(ctx, site.ID, e.kid)
		if err != nil {
			return nil, err
		}
		if pub == e.pub || pub.Equal(e.pub) {
			tok = e.tok
		}
	}
	if tok == nil {
		e, err := v.verifyJWT(ctx, site, raw, now)
		if err != nil {
			return nil, err
		}
		v.tokens.put(&key, e, now)
		tok = e.tok
	}
	if err := v.checkRevoked(ctx, site.ID, tok.JTI, tok.GrantID); err != nil {
		return nil, err
	}
	return tok, nil
}

// publicKey asks the key source for kid, sorting its errors into refusals
// (401) and outages (503).
func (v *Verifier) publicKey(ctx context.Context, site tenant.ID, kid string) (*ecdsa.PublicKey, error) {
	pub, err := v.keys.PublicKey(ctx, site, kid)
	switch {
	case errors.Is(err, keys.ErrUnknownKey):
		return nil, InvalidToken("the access token was signed by a key this site does not publish")
	case err != nil:
		return nil, v.unavailable(ctx, site, "site keys unavailable", err)
	case pub == nil:
		return nil, v.unavailable(ctx, site, "site keys unavailable", fmt.Errorf("bearer: key source returned no key for kid %q", kid))
	}
	return pub, nil
}

// unavailable logs the cause of a 503 (once: WriteError does not) and
// returns it.
func (v *Verifier) unavailable(ctx context.Context, site tenant.ID, msg string, cause error) *Error {
	v.log.ErrorContext(ctx, "bearer: "+msg, "site", int64(site), "err", cause)
	return TemporarilyUnavailable(cause)
}

// logDegraded logs at most one warning per degradedLogEvery.
func (v *Verifier) logDegraded(ctx context.Context, msg string, args ...any) {
	now := time.Now().UnixNano()
	last := v.lastDegradedLog.Load()
	if now-last < int64(degradedLogEvery) || !v.lastDegradedLog.CompareAndSwap(last, now) {
		return
	}
	v.log.WarnContext(ctx, "bearer: "+msg, args...)
}

const degradedLogEvery = 10 * time.Second

func flightKey(site tenant.ID) string { return strconv.FormatInt(int64(site), 10) }
