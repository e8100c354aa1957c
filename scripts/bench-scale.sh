#!/usr/bin/env bash
# Scale benchmark (docs/SCALE.md): imports 10, 1,000 and 10,000 sites into
# fresh PostgreSQL databases (created and dropped on the shared server, named
# lectern_scale_<pid>_<count>), serves each with a real `lectern serve` on
# loopback and measures start-up, memory and latency at random sites.
# BENCH_SCALE_SHORT=1 runs the CI subset (10 and 200 sites, 1 s per row).
# Extra arguments go to cmd/lectern-scale (e.g. --profile-dir /tmp/heap).
set -euo pipefail
cd "$(dirname "$0")/.."

ADMIN=${BENCH_PG_ADMIN_URL:-postgres://postgres@127.0.0.1:5432/test?sslmode=disable}
REDIS=${BENCH_REDIS_URL:-redis://127.0.0.1:6379/0}
PORT=${BENCH_SCALE_PORT:-29180}
if [ "${BENCH_SCALE_SHORT:-}" = 1 ]; then
  set -- --counts 10,200 --duration 1s --cold 50 --flow-sites 8 "$@"
fi

go build -o bin/lectern ./cmd/lectern
go build -o bin/lectern-scale ./cmd/lectern-scale
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
bin/lectern-scale --bin bin/lectern --admin-url "$ADMIN" --redis-url "$REDIS" --port "$PORT" "$@"
