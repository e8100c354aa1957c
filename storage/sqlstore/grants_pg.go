package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"time"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// The PostgreSQL fast paths of the two writes on every token request. Each
// is one statement — one round trip, one commit — with the semantics of the
// portable transactions (which SQLite uses, and which handle the rare
// outcomes). They run on database/sql directly: on these two statements
// gorm's statement building and reflection cost more than the query.

// createGrantSQL inserts a grant, its refresh token and (with the audit
// variant) one audit event.
const createGrantSQL = `
WITH g AS (
  INSERT INTO grants (id, site_id, client_id, user_id, scopes, resource, auth_time, created_at, expires_at, last_used_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
  RETURNING id
), t AS (
  INSERT INTO refresh_tokens (site_id, grant_id, token_hash, created_at, expires_at)
  SELECT $2, id, $11, $12, $13 FROM g
  RETURNING 1
)`

const createGrantPlainSQL = createGrantSQL + `
SELECT count(*) FROM t`

const createGrantAuditSQL = createGrantSQL + `
INSERT INTO audit_events (site_id, actor, action, target, ip, details, created_at)
SELECT $2, $14, $15, $16, $17, $18, $19 FROM t`

func (s *Store) createGrantPG(ctx context.Context, g *storage.Grant, rt *storage.RefreshToken, audit []*storage.AuditEvent) error {
	scopes, err := json.Marshal(g.Scopes)
	if err != nil {
		return err
	}
	args := []any{g.ID, int64(g.SiteID), g.ClientID, g.UserID, string(scopes), g.Resource, g.AuthTime,
		g.CreatedAt, g.ExpiresAt, g.LastUsedAt, rt.TokenHash, rt.CreatedAt, rt.ExpiresAt}
	q := createGrantPlainSQL
	if len(audit) == 1 {
		e := audit[0]
		details, err := json.Marshal(e.Details)
		if err != nil {
			return err
		}
		args = append(args, e.Actor, e.Action, e.Target, e.IP, string(details), e.CreatedAt)
		q = createGrantAuditSQL
	}
	_, err = s.keyDB.ExecContext(ctx, q, args...)
	return err
}

// rotateSQL marks the token used if it and its grant are live, and inserts
// the next token, capped at the grant's expiry. The conditional UPDATE of
// the token row is the decision: of two rotations of one token exactly one
// matches "used_at IS NULL". It locks no grant row: a rotation racing a
// revocation can only leave a token whose grant is revoked, which every
// later use refuses — and with no grant lock there is no lock-order
// deadlock with RevokeGrant. The grant check is a correlated scalar
// subquery on purpose: PostgreSQL runs it as one primary-key lookup, where
// an EXISTS may be planned as a scan of the site's grants.
const rotateSQL = `
WITH used AS (
  UPDATE refresh_tokens t SET used_at = $3
  WHERE t.site_id = $1 AND t.token_hash = $2 AND t.used_at IS NULL AND t.revoked_at IS NULL AND t.expires_at > $3
    AND (SELECT g.revoked_at IS NULL AND g.expires_at > $3 FROM grants g WHERE g.id = t.grant_id AND g.site_id = $1)
  RETURNING t.grant_id
), g AS (
  SELECT g.id, g.client_id, g.user_id, g.scopes, g.resource, g.auth_time, g.created_at, g.expires_at, g.last_used_at
  FROM grants g WHERE g.id = (SELECT grant_id FROM used)
), ins AS (
  INSERT INTO refresh_tokens (site_id, grant_id, token_hash, parent_hash, created_at, expires_at)
  SELECT $1, id, $4, $2, $3, LEAST($5::timestamptz, expires_at) FROM g
  RETURNING 1
)
SELECT id, client_id, user_id, scopes, resource, auth_time, created_at, expires_at, last_used_at, (SELECT count(*) FROM ins)
FROM g`

// touchEvery is how stale a grant's last_used_at may get before a refresh
// rewrites it: it is shown as "last used", and an UPDATE on every refresh
// would double the writes of the hottest path.
const touchEvery = time.Hour

// rotatePG returns the grant if the token rotated, nil and no error if it
// did not (for the general path to explain why).
func (s *Store) rotatePG(ctx context.Context, site tenant.ID, oldHash []byte, next *storage.RefreshToken, now time.Time) (*storage.Grant, error) {
	utcToken(next)
	g := storage.Grant{SiteID: site}
	var (
		scopes   string
		inserted int64
	)
	err := s.keyDB.QueryRowContext(ctx, rotateSQL, int64(site), oldHash, now, next.TokenHash, next.ExpiresAt).
		Scan(&g.ID, &g.ClientID, &g.UserID, &scopes, &g.Resource, &g.AuthTime, &g.CreatedAt, &g.ExpiresAt, &g.LastUsedAt, &inserted)
	if err == sql.ErrNoRows {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(scopes), &g.Scopes); err != nil {
		return nil, err
	}
	if now.Sub(g.LastUsedAt) > touchEvery {
		if err := s.TouchGrant(ctx, site, g.ID, now); err == nil {
			g.LastUsedAt = now
		}
	}
	next.SiteID, next.GrantID, next.ParentHash = site, g.ID, oldHash
	if next.ExpiresAt.After(g.ExpiresAt) {
		next.ExpiresAt = g.ExpiresAt
	}
	return &g, nil
}
