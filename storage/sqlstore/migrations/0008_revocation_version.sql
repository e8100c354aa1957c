-- +goose Up
-- 0008_revocation_version: a per-site counter of revocations, bumped in the
-- transaction of every revocation (a grant, a single access token, a reused
-- refresh token). Replicas poll it (cheaply, for the sites they serve) and
-- trust the cache's copy of a site's revocations only when the copy says it
-- is complete up to this version: a copy that lost its latest writes in a
-- Redis failover, or was evicted, can then never vouch for a revoked token
-- (docs/decisions.md, "Revocation state survives cache loss").
ALTER TABLE sites ADD COLUMN revocation_version {{.Int64}} NOT NULL DEFAULT 0;
