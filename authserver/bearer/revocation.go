package bearer

import (
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// Revocation state (DESIGN §4). The database decides; the cache holds
// copies so that a check is one round trip:
//
//	{s<site>}:rev:jti:<jti>      a revoked access token, until its exp + skew
//	{s<site>}:rev:grant:<id>     a revoked grant, for AccessTokenLifetime + skew
//	{s<site>}:rev:ready          the site's copies are complete (RefillInterval)
//
// All keys of a site share its hash tag, so a check's MGET stays in one
// Redis Cluster slot. A cache that lost its data (flushed, restarted, failed
// over) has lost the marker too: the next check of that site refills the
// copies from the database before it trusts the cache. The marker expires
// after RefillInterval, so copies are also refilled periodically, which
// bounds the damage of a copy that was lost on its own.
const (
	// RefillInterval is how long a site's copies are trusted after a
	// refill (the marker's TTL).
	RefillInterval = 5 * time.Minute

	kindRevokedJTI   = "rev:jti"
	kindRevokedGrant = "rev:grant"

	// refillTimeout bounds one shared refill. It runs detached from the
	// context of the request that started it, because others wait on it.
	refillTimeout = 10 * time.Second
	// copyTimeout bounds writing one revocation copy (and deleting the
	// marker when that fails), detached from the caller's context.
	copyTimeout = 5 * time.Second
	// refillWriters is how many copies a refill writes at a time.
	refillWriters = 16
)

var revokedValue = []byte("1")

func markerKey(site tenant.ID) string { return storage.CacheKey(site, "rev", "ready") }
func jtiKey(site tenant.ID, jti string) string {
	return storage.CacheKey(site, kindRevokedJTI, jti)
}
func grantKey(site tenant.ID, grantID string) string {
	return storage.CacheKey(site, kindRevokedGrant, grantID)
}

// checkRevoked returns nil when neither the token jti nor its grant is
// revoked, 401 when one is, and 503 when that cannot be known.
func (v *Verifier) checkRevoked(ctx context.Context, site tenant.ID, jti, grantID string) error {
	vals, err := v.cache.GetMulti(ctx, markerKey(site), jtiKey(site, jti), grantKey(site, grantID))
	if err == nil && len(vals) != 3 {
		err = fmt.Errorf("bearer: cache GetMulti returned %d values for 3 keys", len(vals))
	}
	if err != nil {
		// Any cache failure, not only storage.ErrUnavailable: the database
		// can always answer correctly, so there is no reason to guess.
		v.logDegraded(ctx, "revocation cache unavailable; checking the database", "site", int64(site), "err", err)
		return v.checkRevokedInStore(ctx, site, jti, grantID)
	}
	if vals[1] != nil || vals[2] != nil {
		// A copy is only ever written after the database revoked: it is
		// true even when the marker is gone.
		return InvalidToken(descRevoked)
	}
	if vals[0] != nil {
		return nil
	}
	set, err := v.refill(ctx, site)
	if err != nil {
		if ctx.Err() != nil {
			// The caller gave up (its context ended), which says nothing
			// about the database; the refill goes on for the others.
			return TemporarilyUnavailable(err)
		}
		return v.unavailable(ctx, site, "revocation state unavailable (cache not filled, database down)", err)
	}
	if set.revoked(jti, grantID) {
		return InvalidToken(descRevoked)
	}
	return nil
}

// checkRevokedInStore decides from the database alone.
func (v *Verifier) checkRevokedInStore(ctx context.Context, site tenant.ID, jti, grantID string) error {
	revoked, err := v.store.TokenRevoked(ctx, site, jti)
	if err != nil {
		return v.unavailable(ctx, site, "revocation state unavailable (cache and database down)", err)
	}
	if revoked {
		return InvalidToken(descRevoked)
	}
	g, err := v.store.GrantByID(ctx, site, grantID)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		// A grant that does not exist (any more) vouches for nothing.
		return InvalidToken(descRevoked)
	case err != nil:
		return v.unavailable(ctx, site, "revocation state unavailable (cache and database down)", err)
	case g.RevokedAt != nil:
		return InvalidToken(descRevoked)
	}
	return nil
}

// revocationSet is a site's revocation state as one refill read it.
type revocationSet struct {
	jtis   map[string]struct{}
	grants map[string]struct{}
}

func (s *revocationSet) revoked(jti, grantID string) bool {
	_, j := s.jtis[jti]
	_, g := s.grants[grantID]
	return j || g
}

// refill reads the site's revocation state from the database, copies it to
// the cache and sets the marker; concurrent callers for one site share one
// refill. The state is returned even when the copies could not be written
// (then the marker is not set, and the next check tries again).
func (v *Verifier) refill(ctx context.Context, site tenant.ID) (*revocationSet, error) {
	ch := v.refills.DoChan(flightKey(site), func() (any, error) {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), refillTimeout)
		defer cancel()
		return v.doRefill(rctx, site)
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

func (v *Verifier) doRefill(ctx context.Context, site tenant.ID) (*revocationSet, error) {
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
	set := &revocationSet{
		jtis:   make(map[string]struct{}, len(jtis)),
		grants: make(map[string]struct{}, len(grants)),
	}
	type copyEntry struct {
		key string
		ttl time.Duration
	}
	copies := make([]copyEntry, 0, len(grants)+len(jtis))
	for _, g := range grants {
		set.grants[g.GrantID] = struct{}{}
		if ttl := g.RevokedAt.Add(AccessTokenLifetime + v.skew).Sub(now); ttl > 0 {
			copies = append(copies, copyEntry{grantKey(site, g.GrantID), ttl})
		}
	}
	for _, t := range jtis {
		set.jtis[t.JTI] = struct{}{}
		if ttl := t.ExpiresAt.Add(v.skew).Sub(now); ttl > 0 {
			copies = append(copies, copyEntry{jtiKey(site, t.JTI), ttl})
		}
	}
	eg, ectx := errgroup.WithContext(ctx)
	eg.SetLimit(refillWriters)
	for _, c := range copies {
		eg.Go(func() error { return v.cache.Set(ectx, c.key, revokedValue, c.ttl) })
	}
	if err := eg.Wait(); err != nil {
		v.logDegraded(ctx, "revocation copies not written; answering from the database", "site", int64(site), "err", err)
		return set, nil
	}
	if err := v.cache.Set(ctx, markerKey(site), revokedValue, RefillInterval); err != nil {
		v.logDegraded(ctx, "revocation marker not written", "site", int64(site), "err", err)
	}
	return set, nil
}

// RevokeGrant revokes the grant in the database (with its refresh tokens)
// and then writes the cache copy that makes resource servers refuse its
// access tokens at once. An unknown grant is storage.ErrNotFound. Once the
// database write succeeded RevokeGrant returns nil: a copy that cannot be
// written is logged, and the site's marker is deleted so that the next
// check refills from the database.
func (v *Verifier) RevokeGrant(ctx context.Context, site tenant.ID, grantID string, now time.Time) error {
	if grantID == "" {
		return errors.New("bearer: RevokeGrant needs a grant id")
	}
	if err := v.store.RevokeGrant(ctx, site, grantID, now); err != nil {
		return err
	}
	v.writeCopy(ctx, site, grantKey(site, grantID), AccessTokenLifetime+v.skew)
	return nil
}

// MarkGrantRevoked writes only the cache copy of a grant that the database
// has already revoked (refresh-token reuse detection revokes in the same
// transaction that finds the reuse). Like RevokeGrant it returns nil when
// the copy cannot be written, after logging and deleting the site's marker.
func (v *Verifier) MarkGrantRevoked(ctx context.Context, site tenant.ID, grantID string) error {
	if grantID == "" {
		return errors.New("bearer: MarkGrantRevoked needs a grant id")
	}
	v.writeCopy(ctx, site, grantKey(site, grantID), AccessTokenLifetime+v.skew)
	return nil
}

// RevokeToken records the revocation of one access token (RFC 7009) in the
// database and then writes its cache copy, which lives until the token has
// expired (expiry + skew). Revoking it again is a no-op. As with
// RevokeGrant, only a database failure is returned.
func (v *Verifier) RevokeToken(ctx context.Context, site tenant.ID, jti string, expiry, now time.Time) error {
	if jti == "" {
		return errors.New("bearer: RevokeToken needs a jti")
	}
	if err := v.store.RevokeToken(ctx, &storage.RevokedToken{SiteID: site, JTI: jti, ExpiresAt: expiry, RevokedAt: now}); err != nil {
		return err
	}
	if ttl := expiry.Add(v.skew).Sub(now); ttl > 0 {
		v.writeCopy(ctx, site, jtiKey(site, jti), ttl)
	}
	return nil
}

// writeCopy writes one revocation copy. When that fails it deletes the
// site's marker, so the next check refills from the database, which knows.
// When that fails too (the cache is down), the delete is retried in the
// background until the cache answers: only in the moment between the
// cache's return and the retry (a second) could a replica trust a marker
// that vouches for a copy the cache lacks.
func (v *Verifier) writeCopy(ctx context.Context, site tenant.ID, key string, ttl time.Duration) {
	// The database write has happened; a caller that gives up now must not
	// leave the cache without the copy.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), copyTimeout)
	defer cancel()
	err := v.cache.Set(ctx, key, revokedValue, ttl)
	if err == nil {
		return
	}
	derr := v.later.Delete(ctx, RefillInterval, markerKey(site))
	if derr == nil {
		v.log.WarnContext(ctx, "bearer: revocation copy not written; the site's cache will be refilled from the database",
			"site", int64(site), "err", err)
		return
	}
	// The cache is down. Every check meanwhile reads the database; the
	// marker is deleted as soon as the cache answers again, so that no
	// replica trusts the copies it lacks.
	v.log.ErrorContext(ctx, "bearer: revocation copy not written and the site's marker not deleted yet; it will be deleted as soon as the cache answers",
		"site", int64(site), "err", err, "marker_err", derr)
}
