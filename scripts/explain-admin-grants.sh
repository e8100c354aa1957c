#!/usr/bin/env bash
# EXPLAIN ANALYZE of the admin area's grant queries (web: Connected apps, the
# dashboard and application counts) on PostgreSQL with 200,000 grants over 20
# sites, 10% revoked. Uses a scratch database that it drops at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
PG=${PG:-postgres://postgres@127.0.0.1:5432}
db=lectern_explain_$$
psql "$PG/postgres" -qc "CREATE DATABASE $db"
trap 'psql "$PG/postgres" -qc "DROP DATABASE IF EXISTS $db"' EXIT
go build -o /tmp/lectern-explain ./cmd/lectern
DATABASE_URL="$PG/$db" LECTERN_KEK=$(head -c32 /dev/urandom | base64) /tmp/lectern-explain migrate >/dev/null
psql "$PG/$db" -q <<'SQL'
SET session_replication_role = replica; -- no site rows needed for the plan
INSERT INTO users (id, email, name, password_hash, created_at, updated_at)
  SELECT 'u'||i, 'u'||i||'@x', 'n', '', now(), now() FROM generate_series(1, 1000) i;
INSERT INTO grants (id, site_id, client_id, user_id, scopes, resource, auth_time, created_at, expires_at, last_used_at, revoked_at)
  SELECT 'g'||i, 1 + i % 20, 'c'||(i % 7), 'u'||(1 + i % 1000), '[]', '', now(), now() - (i||' s')::interval,
         now() + interval '90 days', now(), CASE WHEN i % 10 = 0 THEN now() END
  FROM generate_series(1, 200000) i;
ANALYZE grants;
\echo '-- Connected apps, page 3 (LiveGrants)'
EXPLAIN ANALYZE SELECT * FROM grants WHERE site_id = 3 AND revoked_at IS NULL AND expires_at > now()
  ORDER BY created_at DESC, id LIMIT 20 OFFSET 40;
\echo '-- its total'
EXPLAIN ANALYZE SELECT count(*) FROM grants WHERE site_id = 3 AND revoked_at IS NULL AND expires_at > now();
\echo '-- connections per application (LiveGrantCounts)'
EXPLAIN ANALYZE SELECT client_id, count(*) FROM grants WHERE site_id = 3 AND revoked_at IS NULL AND expires_at > now()
  GROUP BY client_id;
SQL
