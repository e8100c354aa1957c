package bearer

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// Revocation state (DESIGN §4). The database decides; the cache holds a copy
// of each site's revocations so that a check is one round trip. The copy is
// ONE hash per site, so eviction takes it whole, never one entry alone:
//
//	{s<site>}:rev:state   v        the site's revocation version the copy is complete up to
//	                      j:<jti>  a revoked access token (value: when the token expires)
//	                      g:<id>   a revoked grant (value: when its last access token expires)
//
// A field present means revoked: one is only written after the database
// revoked. An absent field means "not revoked" only when the hash is at
// least at the version this replica knows to be current (versions.go):
// a hash that is gone (evicted, flushed) or behind (a failover lost the old
// master's last writes, and with them the version they raised) is refilled
// from the database first. Every hash expires RefillInterval after its
// refill, which also drops the fields of expired tokens.
const (
	// RefillInterval is how long a refilled hash lives; revocations added
	// meanwhile do not extend it.
	RefillInterval = 5 * time.Minute

	fieldJTI   = "j:"
	fieldGrant = "g:"

	// refillTimeout bounds one shared refill. It runs detached from the
	// context of the request that started it, because others wait on it.
	refillTimeout = 10 * time.Second
	// copyTimeout bounds writing one revocation copy, detached from the
	// caller's context.
	copyTimeout = 5 * time.Second
	// cacheRetry is how long a refill the cache refused to store answers
	// in its place before the next refill tries the cache again.
	cacheRetry = time.Second
)

func stateKey(site tenant.ID) string { return storage.CacheKey(site, "rev", "state") }

// checkRevoked returns nil when neither the token jti nor its grant is
// revoked, 401 when one is, and 503 when that cannot be known.
func (v *Verifier) checkRevoked(ctx context.Context, site tenant.ID, jti, grantID string) error {
	vals, err := v.cache.HashGet(ctx, stateKey(site), storage.HashVersionField, fieldJTI+jti, fieldGrant+grantID)
	if err == nil && len(vals) != 3 {
		err = fmt.Errorf("bearer: cache HashGet returned %d values for 3 fields", len(vals))
	}
	if err != nil {
		// Any cache failure, not only storage.ErrUnavailable: the database
		// can always answer correctly, so there is no reason to guess.
		v.logDegraded(ctx, "revocation cache unavailable; deciding from the database", "site", int64(site), "err", err)
		return v.checkRevokedOffline(ctx, site, jti, grantID)
	}
	if vals[1] != nil || vals[2] != nil {
		return InvalidToken(descRevoked)
	}
	known, ok := v.versions.current(ctx, site)
	if ok && vals[0] != nil {
		if cached, err := strconv.ParseInt(string(vals[0]), 10, 64); err == nil && cached >= known {
			return nil
		}
	}
	if ok {
		// A refill that could not write the hash (Redis full) left its
		// answer here: as good as a new one while the version holds, and
		// used for a second before the cache is tried again.
		if e, found := v.local.get(site, known); found && e.set != nil && time.Now().Before(e.retryAt) {
			if e.set.revoked(jti, grantID) {
				return InvalidToken(descRevoked)
			}
			return nil
		}
	}
	set, err := v.refill(ctx, site, true)
	if err != nil {
		return v.refillFailed(ctx, site, err)
	}
	if set.revoked(jti, grantID) {
		return InvalidToken(descRevoked)
	}
	return nil
}

func (v *Verifier) refillFailed(ctx context.Context, site tenant.ID, err error) error {
	if ctx.Err() != nil {
		// The caller gave up (its context ended), which says nothing about
		// the database; the refill goes on for the others.
		return TemporarilyUnavailable(err)
	}
	return v.unavailable(ctx, site, "revocation state unavailable (cache not filled, database down)", err)
}

// revocationSet is a site's revocation state as one refill read it.
type revocationSet struct {
	version int64
	jtis    map[string]struct{}
	grants  map[string]struct{}
}

func (s *revocationSet) revoked(jti, grantID string) bool {
	_, j := s.jtis[jti]
	_, g := s.grants[grantID]
	return j || g
}

func (s *revocationSet) size() int { return len(s.jtis) + len(s.grants) }

// refill reads the site's revocation state from the database and, with
// toCache, replaces the site's hash with it; concurrent callers for one site
// share one refill. The state is returned even when the hash could not be
// written (the next check tries again).
func (v *Verifier) refill(ctx context.Context, site tenant.ID, toCache bool) (*revocationSet, error) {
	key := flightKey(site)
	if !toCache {
		key = "db:" + key
	}
	ch := v.refills.DoChan(key, func() (any, error) {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), refillTimeout)
		defer cancel()
		return v.doRefill(rctx, site, toCache)
	})
	select {
	case r := <-ch:
		if r.Err != nil {
			return nil, r.Err
		}
		return r.Val.(*revocationSet), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (v *Verifier) doRefill(ctx context.Context, site tenant.ID, toCache bool) (*revocationSet, error) {
	start := time.Now()
	// The version first: every revocation up to it is committed, so the
	// rows read next hold them all (and perhaps later ones, which is fine).
	versions, err := v.store.RevocationVersions(ctx, []tenant.ID{site})
	if err != nil {
		return nil, err
	}
	version := versions[site]
	now := time.Now()
	// Tokens of a grant revoked earlier than this have all expired (beyond
	// skew), so its copy is no longer needed.
	grants, err := v.store.RevokedGrants(ctx, site, now.Add(-AccessTokenLifetime-v.skew))
	if err != nil {
		return nil, err
	}
	// Tokens that expired less than skew ago are still accepted, so their
	// revocations still count.
	jtis, err := v.store.RevokedTokens(ctx, site, now.Add(-v.skew))
	if err != nil {
		return nil, err
	}
	v.versions.observe(site, version, start)
	set := &revocationSet{
		version: version,
		jtis:    make(map[string]struct{}, len(jtis)),
		grants:  make(map[string]struct{}, len(grants)),
	}
	fields := make(map[string][]byte, len(grants)+len(jtis))
	for _, g := range grants {
		set.grants[g.GrantID] = struct{}{}
		fields[fieldGrant+g.GrantID] = expiryValue(g.RevokedAt.Add(AccessTokenLifetime + v.skew))
	}
	for _, t := range jtis {
		set.jtis[t.JTI] = struct{}{}
		fields[fieldJTI+t.JTI] = expiryValue(t.ExpiresAt.Add(v.skew))
	}
	if !toCache {
		return set, nil
	}
	if _, err := v.cache.HashReplace(ctx, stateKey(site), version, fields, RefillInterval); err != nil {
		// Keep the answer in memory, so that every check until the cache
		// takes writes again does not read the database again.
		v.local.put(site, set, time.Now().Add(cacheRetry))
		v.logDegraded(ctx, "revocation copies not written; answering from the database", "site", int64(site), "err", err)
	}
	return set, nil
}

func expiryValue(t time.Time) []byte { return strconv.AppendInt(nil, t.Unix(), 10) }

// RevokeGrant revokes the grant in the database (with its refresh tokens)
// and then adds it to the site's cached copy, which makes resource servers
// refuse its access tokens at once. An unknown grant is
// storage.ErrNotFound. Once the database write succeeded RevokeGrant
// returns nil: a copy that cannot be written is logged, and the revocation
// version it raised makes every replica refill the copy (this one at once,
// the others within a poll).
func (v *Verifier) RevokeGrant(ctx context.Context, site tenant.ID, grantID string, now time.Time) error {
	if grantID == "" {
		return errors.New("bearer: RevokeGrant needs a grant id")
	}
	start := time.Now()
	version, err := v.store.RevokeGrant(ctx, site, grantID, now)
	if err != nil {
		return err
	}
	v.versions.observe(site, version, start)
	v.writeCopy(ctx, site, version, fieldGrant+grantID, now.Add(AccessTokenLifetime+v.skew))
	return nil
}

// MarkGrantRevoked adds a grant that the database has already revoked
// (refresh-token reuse detection revokes in the same transaction that finds
// the reuse) to the site's cached copy. That transaction raised the site's
// revocation version without reporting it, so the version is read here: the
// copy falls behind it, and every replica refills before trusting an
// absent entry. Like RevokeGrant it returns nil when the copy cannot be
// written, after logging.
func (v *Verifier) MarkGrantRevoked(ctx context.Context, site tenant.ID, grantID string) error {
	if grantID == "" {
		return errors.New("bearer: MarkGrantRevoked needs a grant id")
	}
	start := time.Now()
	if vs, err := v.store.RevocationVersions(ctx, []tenant.ID{site}); err == nil {
		v.versions.observe(site, vs[site], start)
	} else {
		v.log.WarnContext(ctx, "bearer: revocation version not read after a reuse revocation; replicas see it within a poll", "site", int64(site), "err", err)
	}
	v.writeCopy(ctx, site, 0, fieldGrant+grantID, time.Now().Add(AccessTokenLifetime+v.skew))
	return nil
}

// RevokeToken records the revocation of one access token (RFC 7009) in the
// database and then adds it to the site's cached copy until the token has
// expired (expiry + skew). Revoking it again is harmless. As with
// RevokeGrant, only a database failure is returned.
func (v *Verifier) RevokeToken(ctx context.Context, site tenant.ID, jti string, expiry, now time.Time) error {
	if jti == "" {
		return errors.New("bearer: RevokeToken needs a jti")
	}
	start := time.Now()
	version, err := v.store.RevokeToken(ctx, &storage.RevokedToken{SiteID: site, JTI: jti, ExpiresAt: expiry, RevokedAt: now})
	if err != nil {
		return err
	}
	v.versions.observe(site, version, start)
	v.writeCopy(ctx, site, version, fieldJTI+jti, expiry.Add(v.skew))
	return nil
}

// writeCopy adds one revocation to the site's hash and, when the hash was
// complete up to the version before it, advances the hash to version (0:
// leave the version). An absent hash stays absent: the next check refills
// it. A write that fails needs no repair: this replica knows the new
// version and the others learn it from their next poll, so no replica
// trusts a hash that lacks the revocation.
func (v *Verifier) writeCopy(ctx context.Context, site tenant.ID, version int64, field string, expires time.Time) {
	// The database write has happened; a caller that gives up now must not
	// leave the cache without the copy.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), copyTimeout)
	defer cancel()
	if err := v.cache.HashAdd(ctx, stateKey(site), version, map[string][]byte{field: expiryValue(expires)}); err != nil {
		v.log.WarnContext(ctx, "bearer: revocation copy not written; the site's copy will be refilled from the database",
			"site", int64(site), "err", err)
	}
}
