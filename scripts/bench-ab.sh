#!/usr/bin/env bash
# Issue 17: two Lectern binaries alternated in one window (A, B, A, B, ...),
# each serving from a fresh database of its own on the same PostgreSQL and
# Redis, configured as scripts/bench-side-by-side.sh configures Lectern. One
# line per run: ops/s, p50/p99, and the CPU per operation (µs) of the
# server, PostgreSQL (-uids), the load generator and everything else, from
# flowbench's CPU columns (% x 10,000 / ops/s).
#   BENCH_DIR=<copy of the shared bench folder> scripts/bench-ab.sh <binary A> <binary B>
#   (WL=W3 (or "W1 W3", run in turn) C=64 ROUNDS=3 DUR=10s; PG_ADMIN_URL, BENCH_DB_UIDS, REDIS_URL as
#    for bench-side-by-side.sh; B_SQL="<statement>" runs in B's database
#    before its server starts, to try a schema change without a migration)
# Loopback only; every flowbench run stops by itself.
set -euo pipefail
a=${1:?binary A}; b=${2:?binary B}
bench=${BENCH_DIR:?set BENCH_DIR to a copy of the shared bench folder (flowbench)}
work=${BENCH_WORK:-${TMPDIR:-/tmp}/lectern-ab}; mkdir -p "$work/bin"
wl=${WL:-W3}; c=${C:-64}; rounds=${ROUNDS:-3}; dur=${DUR:-10s}
port=${BENCH_PORT:-34520}
pg=${PG_ADMIN_URL:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}
(cd "$bench/flowbench" && go build -o "$work/bin/flowbench" .)
uids=${BENCH_DB_UIDS:-$(id -u postgres 2>/dev/null || true)}
dburl() { python3 -c 'import sys, urllib.parse as u; p = u.urlsplit(sys.argv[1]); print(u.urlunsplit(p._replace(path="/" + sys.argv[2])))' "$pg" "$1"; }
j() { python3 -c "import json,sys; d=json.loads(sys.argv[1]); print(d.get(sys.argv[2]) or d.get(sys.argv[3]))" "$1" "$2" "$3"; }

pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; wait "${pids[@]}" 2>/dev/null || true' EXIT
# start NAME BINARY PORT: a fresh database lectern_ab_NAME, seeded, served.
start() {
  local name=$1 bin=$2 p=$3 db=lectern_ab_$1
  psql "$pg" -qc "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >/dev/null
  (
    export DATABASE_URL=$(dburl "$db") REDIS_URL=${REDIS_URL:-redis://127.0.0.1:6379/0} LECTERN_REDIS_PREFIX="ab-$$-$name:"
    export LECTERN_KEK=$(head -c32 /dev/urandom | base64) LECTERN_ADDR=127.0.0.1:$p
    export LECTERN_LOG_LEVEL=warn LECTERN_ACCESS_LOG=false LECTERN_DB_MAX_CONNS=${DB_MAX_CONNS:-16}
    export LECTERN_METRICS_ADDR=127.0.0.1:$((p + 1)) LECTERN_PPROF=true
    "$bin" migrate >/dev/null
    [ "$name" = b ] && [ -n "${B_SQL:-}" ] && psql "$DATABASE_URL" -qc "$B_SQL" >/dev/null
    "$bin" seed demo --port "$p" >/dev/null
    public=$("$bin" client create --site demo-academy --name "flowbench public" --redirect-uri http://127.0.0.1:9999/cb --json)
    conf=$("$bin" client create --site demo-academy --name "flowbench resource server" --confidential --resource-server --redirect-uri http://127.0.0.1:9999/cb --json)
    echo "cid=$(j "$public" client_id clientId) rs=$(j "$conf" client_id clientId):$(j "$conf" client_secret clientSecret)" >"$work/$name.env"
    exec env LECTERN_LIMIT_TOKEN_PER_CLIENT=1000000000 LECTERN_LIMIT_TOKEN_PER_SITE=1000000000 \
      LECTERN_LIMIT_AUTHORIZE_PER_SITE=1000000000 LECTERN_LIMIT_AUTHORIZE_PER_IP=1000000000 \
      LECTERN_LIMIT_LOGIN_CHECKS_PER_SITE=1000 LECTERN_SESSIONS_PER_ACCOUNT=1000 "$bin" serve >"$work/$name.log" 2>&1
  ) &
  pids+=($!)
  for _ in $(seq 1 150); do curl -fsS -o /dev/null "http://localhost:$p/readyz" 2>/dev/null && return; sleep 0.2; done
  echo "server $name did not become ready; see $work/$name.log" >&2; exit 1
}
start a "$a" "$port"; apid=${pids[-1]}
start b "$b" "$((port + 10))"; bpid=${pids[-1]}

run() { # run NAME PORT PID
  local cid rs
  cid=$(sed -n 's/^cid=\([^ ]*\).*/\1/p' "$work/$1.env"); rs=$(sed -n 's/.* rs=\(.*\)$/\1/p' "$work/$1.env")
  FLOWBENCH_PASSWORD=demo-student-pass FLOWBENCH_INTROSPECT="$rs" "$work/bin/flowbench" -op lectern -issuer "http://localhost:$2" \
    -client-id "$cid" -pids "$3" ${uids:+-uids "$uids"} -d "$dur" -c "$c" -w "$wl" 2>&1 |
    awk -v n="$1" '/^lectern  +W/ { ops = $(NF-9); s = 10000 / ops
      printf "%s %s c=%s  %8.1f ops/s  p50 %6.2f  p99 %6.2f ms  srv %4.0f  db %4.0f  gen %4.0f  oth %4.0f  all %4.0f µs/op\n",
        n, $2, $(NF-10), ops, $(NF-8), $(NF-6), $(NF-4)*s, $(NF-3)*s, $(NF-2)*s, $(NF-1)*s, ($(NF-4)+$(NF-3)+$(NF-2)+$(NF-1))*s }'
}
for _ in $(seq 1 "$rounds"); do
  for w in $wl; do
    wl=$w run a "$port" "$apid"
    wl=$w run b "$((port + 10))" "$bpid"
  done
done
for n in a b; do
  pid=$apid; [ $n = b ] && pid=$bpid
  echo "$n: RSS $(awk '/VmRSS/{print $2}' "/proc/$pid/status") kB, peak $(awk '/VmHWM/{print $2}' "/proc/$pid/status") kB after the runs"
done
