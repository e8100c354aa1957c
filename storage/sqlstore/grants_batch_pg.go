package sqlstore

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// Batching of the token-path writes on PostgreSQL (see batcher). Under
// concurrency many rotations or grant creations share one statement and one
// commit; alone, a call runs the one-row statement of grants_pg.go.

const (
	// rotateWorkers: one rotation statement in flight per replica. The
	// rotations that arrive while it runs make the next batch, so the
	// batches grow with the load and each costs one commit: measured in W2
	// (docs/PERFORMANCE.md), one worker against four cost PostgreSQL 30-32
	// instead of 51-52 µs per rotation at c=64 and 54-59 instead of 107-110
	// at c=16, and answered 11-19% more refreshes.
	rotateWorkers = 1
	// grantWorkers: grant creations (code exchanges) in flight per replica,
	// one like the rotations: the exchanges that arrive while a batch runs
	// make the next one. Against two, one cost PostgreSQL 96-130 instead
	// of 138-163 µs per code flow at c=64 and 185-236 instead of 284 at
	// c=16 (W3 alternated, docs/PERFORMANCE.md "Fifth pass"); two had
	// paid against four on a machine whose commits cost less.
	grantWorkers = 1
	// keyConns is the key pool's size: one connection per worker.
	keyConns = rotateWorkers + grantWorkers
	batchMax = 32
)

type rotateReq struct {
	site    tenant.ID
	oldHash []byte
	next    *storage.RefreshToken
	now     time.Time
}

// rotateRes is the grant when the token rotated, nil when it did not.
type rotateRes = *storage.Grant

type grantReq struct {
	g     *storage.Grant
	rt    *storage.RefreshToken
	audit []*storage.AuditEvent
}

// rotateBatchSQL rotates many tokens: the same decision as rotateSQL per
// token (the conditional UPDATE on the token row). A token presented twice in
// one batch is updated once; the call whose new hash was inserted won, the
// other takes the general path and finds the token used (reuse).
const rotateBatchSQL = `
WITH req AS (
  SELECT * FROM unnest($1::bigint[], $2::bytea[], $3::bytea[], $4::timestamptz[], $5::timestamptz[]) AS r(site_id, old_hash, new_hash, now, exp)
), used AS (
  UPDATE refresh_tokens t SET used_at = req.now
  FROM req
  WHERE t.site_id = req.site_id AND t.token_hash = req.old_hash AND t.used_at IS NULL AND t.revoked_at IS NULL AND t.expires_at > req.now
    AND (SELECT g.revoked_at IS NULL AND g.expires_at > req.now FROM grants g WHERE g.id = t.grant_id AND g.site_id = req.site_id)
  RETURNING t.site_id, t.grant_id, req.old_hash, req.new_hash, req.now, req.exp
), g AS (
  SELECT used.site_id, used.old_hash, used.new_hash, used.now, used.exp,
         gr.id, gr.client_id, gr.user_id, gr.scopes, gr.resource, gr.auth_time, gr.created_at, gr.expires_at, gr.last_used_at
  FROM used JOIN grants gr ON gr.id = used.grant_id AND gr.site_id = used.site_id
), ins AS (
  INSERT INTO refresh_tokens (site_id, grant_id, token_hash, parent_hash, created_at, expires_at)
  SELECT site_id, id, new_hash, old_hash, now, LEAST(exp, expires_at) FROM g
  RETURNING token_hash
)
SELECT g.new_hash, g.id, g.client_id, g.user_id, g.scopes, g.resource, g.auth_time, g.created_at, g.expires_at, g.last_used_at
FROM g WHERE g.new_hash IN (SELECT token_hash FROM ins)`

func (s *Store) rotateBatch(ctx context.Context, calls []*batchCall[rotateReq, rotateRes]) {
	if len(calls) == 1 {
		c := calls[0]
		c.res, c.err = s.rotatePG(ctx, c.req.site, c.req.oldHash, c.req.next, c.req.now)
		return
	}
	sites := make([]int64, len(calls))
	olds := make([][]byte, len(calls))
	news := make([][]byte, len(calls))
	nows := make([]time.Time, len(calls))
	exps := make([]time.Time, len(calls))
	byNew := make(map[string]*batchCall[rotateReq, rotateRes], len(calls))
	for i, c := range calls {
		utcToken(c.req.next)
		sites[i], olds[i], news[i], nows[i], exps[i] = int64(c.req.site), c.req.oldHash, c.req.next.TokenHash, c.req.now, c.req.next.ExpiresAt
		byNew[hex.EncodeToString(c.req.next.TokenHash)] = c
	}
	rows, err := s.keyDB.QueryContext(ctx, rotateBatchSQL, sites, olds, news, nows, exps)
	if err != nil {
		s.rotateEach(ctx, calls)
		return
	}
	defer rows.Close()
	for rows.Next() {
		var (
			newHash []byte
			g       storage.Grant
			scopes  string
		)
		if err := rows.Scan(&newHash, &g.ID, &g.ClientID, &g.UserID, &scopes, &g.Resource, &g.AuthTime, &g.CreatedAt, &g.ExpiresAt, &g.LastUsedAt); err != nil {
			rows.Close()
			s.rotateEach(ctx, calls)
			return
		}
		c := byNew[hex.EncodeToString(newHash)]
		if c == nil || json.Unmarshal([]byte(scopes), &g.Scopes) != nil {
			continue
		}
		g.SiteID = c.req.site
		c.res = s.finishRotation(ctx, &g, c.req)
	}
	if err := rows.Err(); err != nil {
		// The statement failed as a whole (rolled back): retry one by one.
		for _, c := range calls {
			c.res = nil
		}
		s.rotateEach(ctx, calls)
	}
}

// rotateEach runs the calls one statement each.
func (s *Store) rotateEach(ctx context.Context, calls []*batchCall[rotateReq, rotateRes]) {
	for _, c := range calls {
		c.res, c.err = s.rotatePG(ctx, c.req.site, c.req.oldHash, c.req.next, c.req.now)
	}
}

// finishRotation fills in what the rotation implies for the caller: the
// next token's place in the chain and cap, and a stale last_used_at.
func (s *Store) finishRotation(ctx context.Context, g *storage.Grant, r rotateReq) *storage.Grant {
	if r.now.Sub(g.LastUsedAt) > touchEvery {
		if err := s.TouchGrant(ctx, r.site, g.ID, r.now); err == nil {
			g.LastUsedAt = r.now
		}
	}
	r.next.SiteID, r.next.GrantID, r.next.ParentHash = r.site, g.ID, r.oldHash
	if r.next.ExpiresAt.After(g.ExpiresAt) {
		r.next.ExpiresAt = g.ExpiresAt
	}
	return g
}

// createGrantsBatchSQL inserts many grants with their refresh tokens and
// audit events, all or nothing.
const createGrantsBatchSQL = `
WITH g AS (
  INSERT INTO grants (id, site_id, client_id, user_id, scopes, resource, auth_time, created_at, expires_at, last_used_at)
  SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[], $8::timestamptz[], $9::timestamptz[], $10::timestamptz[])
  RETURNING id
), t AS (
  INSERT INTO refresh_tokens (site_id, grant_id, token_hash, created_at, expires_at)
  SELECT * FROM unnest($2::bigint[], $1::text[], $11::bytea[], $12::timestamptz[], $13::timestamptz[])
  RETURNING grant_id
), a AS (
  INSERT INTO audit_events (site_id, actor, action, target, ip, details, created_at)
  SELECT * FROM unnest($14::bigint[], $15::text[], $16::text[], $17::text[], $18::text[], $19::text[], $20::timestamptz[])
  RETURNING id
)
SELECT (SELECT count(*) FROM g), (SELECT count(*) FROM t), (SELECT count(*) FROM a)`

func (s *Store) createGrantsBatch(ctx context.Context, calls []*batchCall[grantReq, struct{}]) {
	if len(calls) == 1 {
		c := calls[0]
		c.err = s.createGrantPG(ctx, c.req.g, c.req.rt, c.req.audit)
		return
	}
	n := len(calls)
	var (
		ids, clients, users, scopes, resources                 = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		sites                                                  = make([]int64, n)
		authTimes, created, expires, lastUsed, tCreated, tExps = make([]time.Time, n), make([]time.Time, n), make([]time.Time, n), make([]time.Time, n), make([]time.Time, n), make([]time.Time, n)
		hashes                                                 = make([][]byte, n)
		aSites                                                 []int64
		aActors, aActions, aTargets, aIPs, aDetails            []string
		aCreated                                               []time.Time
	)
	for i, c := range calls {
		g, rt := c.req.g, c.req.rt
		sc, err := json.Marshal(g.Scopes)
		if err != nil {
			c.err = err
			s.createGrantsEach(ctx, calls)
			return
		}
		ids[i], sites[i], clients[i], users[i], scopes[i], resources[i] = g.ID, int64(g.SiteID), g.ClientID, g.UserID, string(sc), g.Resource
		authTimes[i], created[i], expires[i], lastUsed[i] = g.AuthTime, g.CreatedAt, g.ExpiresAt, g.LastUsedAt
		hashes[i], tCreated[i], tExps[i] = rt.TokenHash, rt.CreatedAt, rt.ExpiresAt
		for _, e := range c.req.audit {
			d, err := json.Marshal(e.Details)
			if err != nil {
				s.createGrantsEach(ctx, calls)
				return
			}
			aSites = append(aSites, int64(e.SiteID))
			aActors, aActions, aTargets, aIPs, aDetails = append(aActors, e.Actor), append(aActions, e.Action), append(aTargets, e.Target), append(aIPs, e.IP), append(aDetails, string(d))
			aCreated = append(aCreated, e.CreatedAt)
		}
	}
	_, err := s.keyDB.ExecContext(ctx, createGrantsBatchSQL, ids, sites, clients, users, scopes, resources, authTimes, created, expires, lastUsed,
		hashes, tCreated, tExps, aSites, aActors, aActions, aTargets, aIPs, aDetails, aCreated)
	if err != nil {
		// One bad row (a taken grant ID) fails the statement for all: run
		// them one by one so that only that call fails.
		s.createGrantsEach(ctx, calls)
	}
}

func (s *Store) createGrantsEach(ctx context.Context, calls []*batchCall[grantReq, struct{}]) {
	for _, c := range calls {
		c.err = s.createGrantPG(ctx, c.req.g, c.req.rt, c.req.audit)
	}
}
