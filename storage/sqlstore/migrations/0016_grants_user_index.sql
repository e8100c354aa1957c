-- +goose Up
-- 0016_grants_user_index: one index finds a person's grants, where two did
-- (issue 17). grants_site_user (site_id, user_id) served ListGrants and the
-- live grants of a person at a site; grants_user_live (user_id, live only)
-- served UserGrants (a password reset revokes the person's grants at every
-- site). (user_id, site_id) answers both: its leading column for every
-- site's grants, both columns for one site's. A code exchange inserts a
-- grant, and each index is one more entry written, and logged, per grant:
-- four instead of five now. A person's revoked and expired grants are in
-- the index too (the partial index left them out); the queries filter them
-- among that one person's grants.
--
-- Building the index locks the table against inserts for as long as the
-- build takes (code exchanges wait). An operator with a large table builds
-- it beforehand without blocking anyone, and this migration then finds it:
--   CREATE INDEX CONCURRENTLY grants_user_site ON grants (user_id, site_id);
-- The previous release's queries are served by the new index during a
-- rolling upgrade (docs/decisions.md, "Schema changes keep the previous
-- release serving").
{{- if .Postgres}}
-- An invalid leftover of a failed concurrent build is replaced.
-- +goose StatementBegin
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_index WHERE indexrelid = to_regclass('grants_user_site') AND indisvalid) THEN
        DROP INDEX IF EXISTS grants_user_site;
        CREATE INDEX grants_user_site ON grants (user_id, site_id);
    END IF;
END
$$;
-- +goose StatementEnd
{{- else}}
CREATE INDEX grants_user_site ON grants (user_id, site_id);
{{- end}}
DROP INDEX grants_site_user;
DROP INDEX grants_user_live;
