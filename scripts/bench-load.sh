#!/usr/bin/env bash
# Load benchmark: a real `lectern serve` on PostgreSQL + Redis (a fresh
# database lectern_bench, a Redis key prefix of its own), driven by
# cmd/lectern-load over loopback. Prints a Markdown table for
# docs/PERFORMANCE.md. Stops only the server it started.
set -euo pipefail
cd "$(dirname "$0")/.."

PORT=${BENCH_PORT:-18181}
PGURL=${BENCH_PG_ADMIN_URL:-postgres://postgres@127.0.0.1:5432/test?sslmode=disable}
DB=lectern_bench
DBURL=postgres://postgres@127.0.0.1:5432/$DB?sslmode=disable
REDIS=${BENCH_REDIS_URL:-redis://127.0.0.1:6379/0}
DURATION=${BENCH_DURATION:-10s}
SCENARIOS=${BENCH_SCENARIOS:-flow,refresh,userinfo,graphql,mcp-search,mcp-enrollments}
CONCURRENCY=${BENCH_CONCURRENCY:-16,64}

go build -o bin/lectern ./cmd/lectern
go build -o bin/lectern-load ./cmd/lectern-load

psql "$PGURL" -qc "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB" >/dev/null

export DATABASE_URL=$DBURL REDIS_URL=$REDIS LECTERN_REDIS_PREFIX="lectern-bench-$$:"
export LECTERN_KEK=$(head -c32 /dev/urandom | base64) LECTERN_ADDR=127.0.0.1:$PORT
export LECTERN_LOG_LEVEL=warn LECTERN_ACCESS_LOG=false LECTERN_DB_MAX_CONNS=${BENCH_DB_MAX_CONNS:-16}
# The metrics listener on a free loopback port, so that a Prometheus (or
# another lectern) on 9090 does not stop the run.
export LECTERN_METRICS_ADDR=${BENCH_METRICS_ADDR:-127.0.0.1:0}
bin/lectern migrate >/dev/null
bin/lectern seed demo --port "$PORT" >/dev/null
# The measured site is the whole fleet's load here: its per-site budgets
# (issue 14) must not be what is measured.
bin/lectern site update --site demo-academy --limit token_per_site=1000000 \
  --limit graphql_cost_per_site=1000000 --limit mcp_requests_per_site=1000000 >/dev/null

bin/lectern serve 2>/tmp/lectern-bench-server.log &
SERVER=$!
trap 'kill "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true' EXIT
for _ in $(seq 1 50); do curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null && break; sleep 0.2; done

echo "lectern-load: PostgreSQL + Redis, $(nproc) cores shared by server, load generator and both services; ${DURATION} per row"
bin/lectern-load --target "127.0.0.1:$PORT" --duration "$DURATION" --scenarios "$SCENARIOS" --concurrency "$CONCURRENCY" "$@"
