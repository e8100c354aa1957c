-- +goose Up
{{- if .Postgres}}
-- 0003_hot_tables_without_site_fk: the tables written on every token
-- request keep site_id but lose its foreign key. An FK check takes a KEY
-- SHARE lock on the referenced sites row; with every grant, refresh token
-- and audit event of a busy site locking the same row, inserts contend on
-- one multixact (measured: 0.9 ms of trigger time per refresh). Site rows are
-- never deleted while the site serves; removing a site deletes these rows
-- explicitly.
ALTER TABLE grants DROP CONSTRAINT IF EXISTS grants_site_id_fkey;
ALTER TABLE refresh_tokens DROP CONSTRAINT IF EXISTS refresh_tokens_site_id_fkey;
ALTER TABLE audit_events DROP CONSTRAINT IF EXISTS audit_events_site_id_fkey;
ALTER TABLE revoked_tokens DROP CONSTRAINT IF EXISTS revoked_tokens_site_id_fkey;
-- The same holds for refresh_tokens → grants: the check locks the grant
-- row (KEY SHARE, a WAL record) on every rotation. Rotation already refuses
-- a token whose grant is gone or revoked.
ALTER TABLE refresh_tokens DROP CONSTRAINT IF EXISTS refresh_tokens_grant_id_fkey;
{{- else}}
-- 0003_hot_tables_without_site_fk: PostgreSQL drops the site foreign keys
-- of the hot tables (lock contention on the sites row). SQLite has one
-- writer and no such contention; its schema keeps them. This step exists so
-- that both dialects share version numbers.
SELECT 1;
{{- end}}
