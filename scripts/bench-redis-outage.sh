#!/usr/bin/env bash
# Outage benchmark: a real `lectern serve` on PostgreSQL + a private Redis
# (its own redis-server on BENCH_REDIS_PORT), driven by cmd/lectern-load.
# Each resource scenario runs twice: with Redis up, and with Redis stopped
# after the tokens were prepared (lectern-load --before-measure), so the
# second row shows what the resource APIs do while Redis is gone. Prints
# Markdown rows for docs/PERFORMANCE.md. Stops only what it started.
set -euo pipefail
cd "$(dirname "$0")/.."

PORT=${BENCH_PORT:-27380}
RPORT=${BENCH_REDIS_PORT:-27381}
PGURL=${BENCH_PG_ADMIN_URL:-postgres://postgres@127.0.0.1:5432/test?sslmode=disable}
DB=lectern_bench_outage
DBURL=postgres://postgres@127.0.0.1:5432/$DB?sslmode=disable
DURATION=${BENCH_DURATION:-5s}
SCENARIOS=${BENCH_SCENARIOS:-userinfo graphql}
CONCURRENCY=${BENCH_CONCURRENCY:-64}
BIN=${BENCH_BIN:-bin}

if [ -z "${BENCH_BIN:-}" ]; then
  go build -o bin/lectern ./cmd/lectern
fi
go build -o bin/lectern-load ./cmd/lectern-load

RDIR=$(mktemp -d)
start_redis() {
  redis-server --port "$RPORT" --bind 127.0.0.1 --save "" --appendonly no --dir "$RDIR" \
    --maxmemory-policy noeviction --daemonize yes --pidfile "$RDIR/redis.pid" >/dev/null
  for _ in $(seq 1 50); do redis-cli -p "$RPORT" ping >/dev/null 2>&1 && return; sleep 0.1; done
  echo "redis-server on $RPORT did not start" >&2; exit 1
}
stop_redis() {
  if [ -f "$RDIR/redis.pid" ]; then kill "$(cat "$RDIR/redis.pid")" 2>/dev/null || true; fi
  for _ in $(seq 1 50); do redis-cli -p "$RPORT" ping >/dev/null 2>&1 || return 0; sleep 0.1; done
}

psql "$PGURL" -qc "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB" >/dev/null
start_redis

export DATABASE_URL=$DBURL REDIS_URL=redis://127.0.0.1:$RPORT/0
export LECTERN_KEK=$(head -c32 /dev/urandom | base64) LECTERN_ADDR=127.0.0.1:$PORT
export LECTERN_LOG_LEVEL=error LECTERN_ACCESS_LOG=false LECTERN_DB_MAX_CONNS=${BENCH_DB_MAX_CONNS:-16}
"$BIN/lectern" migrate >/dev/null
"$BIN/lectern" seed demo --port "$PORT" >/dev/null

"$BIN/lectern" serve 2>/tmp/lectern-bench-outage.log &
SERVER=$!
trap 'kill "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true; stop_redis; rm -rf "$RDIR"' EXIT
for _ in $(seq 1 50); do curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null && break; sleep 0.2; done

echo "lectern-load: PostgreSQL + private Redis, $(nproc) cores shared by server, load generator and both services; ${DURATION} per row"
ready() {
  for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null && return; sleep 0.1; done
  echo "lectern not ready after Redis came back" >&2; exit 1
}

for sc in $SCENARIOS; do
  start_redis
  ready
  echo "Redis up:"
  bin/lectern-load --target "127.0.0.1:$PORT" --duration "$DURATION" --scenarios "$sc" --concurrency "$CONCURRENCY" --clients 64 "$@" | tail -n +3
  echo "Redis stopped after token preparation:"
  bin/lectern-load --target "127.0.0.1:$PORT" --duration "$DURATION" --scenarios "$sc" --concurrency "$CONCURRENCY" --clients 64 \
    --before-measure "kill \$(cat $RDIR/redis.pid); while redis-cli -p $RPORT ping >/dev/null 2>&1; do sleep 0.05; done" "$@" | tail -n +3 || true
done
