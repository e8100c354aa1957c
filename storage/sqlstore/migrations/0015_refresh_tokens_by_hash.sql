-- +goose Up
-- 0015_refresh_tokens_by_hash: refresh_tokens is keyed by token_hash, the
-- only thing any query finds a token by (issue 17). The surrogate id and
-- its index were never read (pg_stat_user_indexes.idx_scan = 0 for
-- refresh_tokens_pkey after a refresh benchmark); refresh_tokens_grant
-- served only RevokeGrant, which no longer marks a revoked grant's tokens:
-- every reader checks the grant's revoked_at, and RefreshTokenByHash reports
-- a token of a revoked grant as revoked. An insert (one per rotation) now
-- writes the row and one index entry instead of three.
{{- if .Postgres}}
--
-- The UNIQUE constraint's index cannot become the primary key (PostgreSQL
-- refuses an index that belongs to a constraint), so the key's index is
-- built here, in the migration's transaction, with the table locked:
-- refreshes and token look-ups wait for it (1.1 s per million tokens on
-- the 2-core development machine). An operator with a large table builds
-- it beforehand, without blocking anyone, and this migration then promotes
-- it as it is:
--   CREATE UNIQUE INDEX CONCURRENTLY refresh_tokens_hash_pkey ON refresh_tokens (token_hash);
-- An invalid leftover of a failed concurrent build is replaced.
--
-- The strongest lock first: taken later, as an upgrade from the index
-- build's, it could deadlock with a rotation that read its token and then
-- waits to write it.
LOCK TABLE refresh_tokens IN ACCESS EXCLUSIVE MODE;
-- +goose StatementBegin
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_index WHERE indexrelid = to_regclass('refresh_tokens_hash_pkey') AND indisvalid) THEN
        DROP INDEX IF EXISTS refresh_tokens_hash_pkey;
        CREATE UNIQUE INDEX refresh_tokens_hash_pkey ON refresh_tokens (token_hash);
    END IF;
END
$$;
-- +goose StatementEnd
-- The id column stays, without its index, for one release: replicas of
-- the previous release keep serving during a rolling upgrade, and they
-- insert tokens with "RETURNING id" and read rows whole; dropping the
-- column under them would fail their code exchanges. Its default still
-- fills it; nothing reads it. (A later migration drops it.) Those replicas
-- also still mark a revoked grant's tokens by grant_id, which without
-- refresh_tokens_grant scans the table: correct, slow on a large table, so
-- finish the rollout after migrating (docs/decisions.md, "Schema changes keep
-- the previous release serving").
ALTER TABLE refresh_tokens DROP CONSTRAINT refresh_tokens_pkey;
ALTER TABLE refresh_tokens DROP CONSTRAINT refresh_tokens_token_hash_key;
ALTER TABLE refresh_tokens ADD CONSTRAINT refresh_tokens_pkey PRIMARY KEY USING INDEX refresh_tokens_hash_pkey;
DROP INDEX refresh_tokens_grant;
-- A token row is updated once in its life (used_at, when it is rotated),
-- and only a HOT update, whose new version fits on the row's own page,
-- writes no index entry and dirties no second page. At the default
-- fillfactor (100) a page is full when its rows come to be rotated, so
-- about half of those updates were not HOT. At 70, 30% of each page
-- (2.4 kB, room for some 14 new versions of the ~165-byte row) stays free
-- for them, and pruning gives the page back the space of the versions
-- they replaced once no snapshot needs those, so the page's other rows
-- can follow. Measured with the rotation benchmark (64 chains, each token
-- rotated as soon as it is issued: the worst case for pruning): HOT
-- updates 37-55% at 100, 80-88% at 70, 99% at 50; 70 costs the table
-- 1/0.7 of its size where 50 doubles it. It applies to pages written from
-- now on.
ALTER TABLE refresh_tokens SET (fillfactor = 70);
{{- else}}
--
-- SQLite cannot change a table's primary key: the table is rebuilt, WITHOUT
-- ROWID, so that the rows live in the token_hash B-tree itself (a rowid
-- table with a blob key keeps a second B-tree, the key's index, to write on
-- every insert and to search before every read). The foreign keys stay as
-- they were (SQLite has no lock contention to drop them for, 0003).
CREATE TABLE refresh_tokens_new (
    site_id     {{.Int64}} NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    grant_id    text NOT NULL REFERENCES grants (id) ON DELETE CASCADE,
    token_hash  {{.Bytes}} NOT NULL PRIMARY KEY,
    parent_hash {{.Bytes}},
    created_at  {{.Time}} NOT NULL,
    expires_at  {{.Time}} NOT NULL,
    used_at     {{.Time}},
    revoked_at  {{.Time}}
) WITHOUT ROWID;
INSERT INTO refresh_tokens_new (site_id, grant_id, token_hash, parent_hash, created_at, expires_at, used_at, revoked_at)
SELECT site_id, grant_id, token_hash, parent_hash, created_at, expires_at, used_at, revoked_at
FROM refresh_tokens ORDER BY token_hash;
DROP TABLE refresh_tokens;
ALTER TABLE refresh_tokens_new RENAME TO refresh_tokens;
{{- end}}
