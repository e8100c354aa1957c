#!/usr/bin/env bash
# Noisy-neighbour benchmark (issue 14; docs/PERFORMANCE.md, "Noisy
# neighbour"): a real `lectern serve` on PostgreSQL + Redis (a fresh
# database lectern_bench_neighbour, a Redis key prefix of its own), then
# `lectern-load --neighbour`: Open School runs code flows alone, then while
# Demo Academy is flooded with refresh, Member API, MCP and sign-in
# requests. Stops only the server it started.
#
#   BENCH_LECTERN=/path/to/lectern   the server binary (default: this tree),
#                                    e.g. a build of an older commit
#   BENCH_LABEL=...                  the label of the rows
#   any LECTERN_* variable           passed to the server, e.g.
#                                    LECTERN_LIMIT_TOKEN_PER_SITE=1000000000
set -euo pipefail
cd "$(dirname "$0")/.."

PORT=${BENCH_PORT:-26090}
PGURL=${BENCH_PG_ADMIN_URL:-postgres://postgres@127.0.0.1:5432/test?sslmode=disable}
DB=${BENCH_DB:-lectern_bench_neighbour}
DBURL=postgres://postgres@127.0.0.1:5432/$DB?sslmode=disable
REDIS=${BENCH_REDIS_URL:-redis://127.0.0.1:6379/0}
DURATION=${BENCH_DURATION:-10s}

go build -o bin/lectern ./cmd/lectern
go build -o bin/lectern-load ./cmd/lectern-load
SERVER_BIN=${BENCH_LECTERN:-bin/lectern}

psql "$PGURL" -qc "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB" >/dev/null

export DATABASE_URL=$DBURL REDIS_URL=$REDIS LECTERN_REDIS_PREFIX="lectern-neighbour-$$:"
export LECTERN_KEK=$(head -c32 /dev/urandom | base64) LECTERN_ADDR=127.0.0.1:$PORT
export LECTERN_LOG_LEVEL=warn LECTERN_ACCESS_LOG=false LECTERN_DB_MAX_CONNS=${BENCH_DB_MAX_CONNS:-16}
"$SERVER_BIN" migrate >/dev/null
"$SERVER_BIN" seed demo --port "$PORT" >/dev/null
# The quiet site is a busy one in its own right: its budgets must not be
# what limits its flows (a binary without --limit ignores this).
bin/lectern site update --site open-school --limit token_per_site=1000000 >/dev/null 2>&1 || true

"$SERVER_BIN" serve 2>/tmp/lectern-neighbour-server.log &
SERVER=$!
cleanup() {
  kill "$SERVER" 2>/dev/null || true
  wait "$SERVER" 2>/dev/null || true
  for pat in "lectern-neighbour-$$:*" "rate:lectern-neighbour-$$:*"; do
    redis-cli -u "$REDIS" --scan --pattern "$pat" | xargs -r -n 500 redis-cli -u "$REDIS" DEL >/dev/null
  done
  psql "$PGURL" -qc "DROP DATABASE IF EXISTS $DB" >/dev/null 2>&1 || true
}
trap cleanup EXIT
for _ in $(seq 1 50); do curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null && break; sleep 0.2; done

echo "lectern-load --neighbour: PostgreSQL + Redis, $(nproc) cores shared by server, load generator and both services; ${DURATION} per phase; load average $(cut -d' ' -f1-3 /proc/loadavg)"
bin/lectern-load --target "127.0.0.1:$PORT" --neighbour --duration "$DURATION" --label "${BENCH_LABEL:-$(git rev-parse --short HEAD)}" "$@"
