package session

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"slices"
	"time"

	json "github.com/segmentio/encoding/json"

	"github.com/lectern/lectern/tenant"
)

// Authentication methods (RFC 8176) a session records.
const (
	AMRPassword = "pwd"
	AMROTP      = "otp"
	AMRHardware = "hwk"
	AMRMulti    = "mfa"
)

// MaxPerUser is the default bound on the browser sessions of one account,
// over every site: signing in beyond it ends the oldest. Operators set
// another for the platform with --sessions-per-account (Store.SetMax);
// sites cannot, since one account's sessions span sites.
const MaxPerUser = 50

// SetMax sets the bound on one account's sessions (n < 1: MaxPerUser). Call
// it before the store is used.
func (ss *Store) SetMax(n int) {
	if n < 1 {
		n = MaxPerUser
	}
	ss.max = n
}

// Max is the bound on one account's sessions.
func (ss *Store) Max() int { return ss.max }

// MFA reports whether the session was started with two factors.
func (s *Session) MFA() bool { return slices.Contains(s.AMR, AMRMulti) }

// Handle is the session's public name on the account page: a hash of its
// cache key, which cannot be turned back into the cookie.
func (s *Session) Handle() string { return handleOf(sessionKey(s.SiteID, s.id)) }

func handleOf(key string) string {
	sum := sha256.Sum256([]byte("handle:" + key))
	return base64.RawURLEncoding.EncodeToString(sum[:16])
}

// Listed is one of an account's sessions as the account page shows it.
type Listed struct {
	Session
	Handle string
	key    string
}

// List returns the user's live sessions at every site, most recently seen
// first. Index entries whose session expired are dropped from the index.
func (ss *Store) List(ctx context.Context, userID string) ([]Listed, error) {
	idx := indexKey(userID)
	keys, err := ss.cache.SetMembers(ctx, idx)
	if err != nil {
		return nil, err
	}
	var out []Listed
	var gone []string
	for _, k := range keys {
		// Sessions of different sites live in different cluster slots:
		// one read each.
		vals, err := ss.cache.GetMulti(ctx, k)
		if err != nil {
			return nil, err
		}
		var s Session
		if vals[0] == nil || json.Unmarshal(vals[0], &s) != nil || s.UserID != userID {
			gone = append(gone, k)
			continue
		}
		out = append(out, Listed{Session: s, Handle: handleOf(k), key: k})
	}
	if len(gone) > 0 {
		_ = ss.cache.SetRemove(ctx, idx, gone...)
	}
	slices.SortFunc(out, func(a, b Listed) int { return b.Touched.Compare(a.Touched) })
	return out, nil
}

// End ends the user's session named handle at site. It reports false when
// the user has no such session there (another site's or another person's
// session is not found, and nothing changes).
func (ss *Store) End(ctx context.Context, site tenant.ID, userID, handle string) (bool, error) {
	list, err := ss.List(ctx, userID)
	if err != nil {
		return false, err
	}
	for _, l := range list {
		if l.SiteID == site && l.Handle == handle {
			if err := ss.cache.Delete(ctx, l.key); err != nil {
				return false, err
			}
			return true, ss.cache.SetRemove(ctx, indexKey(userID), l.key)
		}
	}
	return false, nil
}

// AddFactors records that the person proved more factors in this session
// (they enrolled or confirmed one): the session counts as two-factor from
// now on.
func (ss *Store) AddFactors(ctx context.Context, s *Session, amr ...string) error {
	for _, m := range amr {
		if !slices.Contains(s.AMR, m) {
			s.AMR = append(s.AMR, m)
		}
	}
	if !s.MFA() && len(s.AMR) > 1 {
		s.AMR = append(s.AMR, AMRMulti)
	}
	return ss.save(ctx, s)
}

// bound ends the user's oldest sessions beyond Max. Best effort: a
// failure leaves a few sessions too many, each still expiring on its own.
func (ss *Store) bound(ctx context.Context, userID string) {
	limit := ss.max
	keys, err := ss.cache.SetMembers(ctx, indexKey(userID))
	if err != nil || len(keys) <= limit {
		return
	}
	list, err := ss.List(ctx, userID)
	if err != nil || len(list) <= limit {
		return
	}
	slices.SortFunc(list, func(a, b Listed) int { return a.Created.Compare(b.Created) })
	var drop []string
	for _, l := range list[:len(list)-limit] {
		if ss.cache.Delete(ctx, l.key) == nil {
			drop = append(drop, l.key)
		}
	}
	_ = ss.cache.SetRemove(ctx, indexKey(userID), drop...)
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// Seen is when the session was last used, to the precision the idle timer
// is renewed at.
func (s *Session) Seen() time.Time { return s.Touched }
