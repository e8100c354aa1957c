#!/usr/bin/env bash
# Issue 17: Lectern and the zitadel/oidc example OP side by side in one
# window. Both servers run at once; per workload flowbench measures the
# reference, then Lectern, REPS times, so each pair shares its minute of a
# noisy machine. Lectern runs on PostgreSQL (a database of its own, dropped
# and made anew) and Redis, with the token and authorization limits raised
# through configuration (the limiters still run on every request); the
# password checks per site are raised too, since each flowbench cell signs in
# c browsers at the same moment (64 sign-ins in one second at c=64; the
# default of 5 a second answers most of them 429, which flowbench counts as
# failed operations), and so are the sessions one account keeps (every
# flowbench browser signs in as the same demo student: at c=64 the default
# of 50 ended the oldest sessions, and those browsers signed in again, an
# argon2id check each, on every flow). LECTERN_BENCH_ENV="NAME=value ..."
# adds settings.
#   BENCH_DIR=<copy of the shared bench folder> scripts/bench-side-by-side.sh
#   (BIN=<lectern binary> REPS=2 WLS="W1 W2 W3 W4 W5" DUR=10s CONC=16,64;
#    PG_ADMIN_URL=<another PostgreSQL> BENCH_DB_UIDS=<uid its processes run as>
#    REDIS_URL=<another Redis>: a dedicated database server, see PERFORMANCE.md)
# Prints one table per run and, per rep, the issue-17 goals it missed
# (scripts/bench-side-by-side-table.py). Loopback
# only; every flowbench run stops by itself.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bench=${BENCH_DIR:?set BENCH_DIR to a copy of the shared bench folder (flowbench, anchors)}
work=${BENCH_WORK:-${TMPDIR:-/tmp}/lectern-sbs}
dur=${DUR:-10s}; conc=${CONC:-16,64}; reps=${REPS:-2}
port=${BENCH_PORT:-34500}; zport=${BENCH_ZITADEL_PORT:-34998}; db=${BENCH_DB:-lectern_sbs}
pg=${PG_ADMIN_URL:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}
out=$work/sbs-$(date -u +%Y%m%dT%H%M%SZ); mkdir -p "$out" "$work/bin"
bin=${BIN:-}
if [ -z "$bin" ]; then (cd "$here/.." && go build -o "$work/bin/lectern" ./cmd/lectern); bin=$work/bin/lectern; fi
(cd "$bench/flowbench" && go build -o "$work/bin/flowbench" .)
(cd "$bench/anchors/zitadel-example" && go build -o "$work/bin/zitadel-example" .)

psql "$pg" -qc "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >/dev/null
export DATABASE_URL=$(python3 -c 'import sys, urllib.parse as u; p = u.urlsplit(sys.argv[1]); print(u.urlunsplit(p._replace(path="/" + sys.argv[2])))' "$pg" "$db")
export REDIS_URL=${REDIS_URL:-redis://127.0.0.1:6379/0} LECTERN_REDIS_PREFIX="sbs-$$:"
export LECTERN_KEK=$(head -c32 /dev/urandom | base64) LECTERN_ADDR=127.0.0.1:$port
export LECTERN_LOG_LEVEL=warn LECTERN_ACCESS_LOG=false LECTERN_DB_MAX_CONNS=${DB_MAX_CONNS:-16}
export LECTERN_METRICS_ADDR=127.0.0.1:$((port + 1)) LECTERN_PPROF=true
"$bin" migrate >/dev/null
"$bin" seed demo --port "$port" >"$out/seed.txt"
issuer=http://localhost:$port
public=$("$bin" client create --site demo-academy --name "flowbench public" --redirect-uri http://127.0.0.1:9999/cb --json)
conf=$("$bin" client create --site demo-academy --name "flowbench resource server" --confidential --resource-server --redirect-uri http://127.0.0.1:9999/cb --json)
j() { python3 -c "import json,sys; d=json.loads(sys.argv[1]); print(d.get(sys.argv[2]) or d.get(sys.argv[3]))" "$1" "$2" "$3"; }
cid=$(j "$public" client_id clientId); rsid=$(j "$conf" client_id clientId); rssec=$(j "$conf" client_secret clientSecret)
env LECTERN_LIMIT_TOKEN_PER_CLIENT=1000000000 LECTERN_LIMIT_TOKEN_PER_SITE=1000000000 \
  LECTERN_LIMIT_AUTHORIZE_PER_SITE=1000000000 LECTERN_LIMIT_AUTHORIZE_PER_IP=1000000000 \
  LECTERN_LIMIT_LOGIN_CHECKS_PER_SITE=1000 LECTERN_SESSIONS_PER_ACCOUNT=1000 ${LECTERN_BENCH_ENV:-} "$bin" serve >"$out/server.log" 2>&1 &
lpid=$!
(PORT=$zport exec "$work/bin/zitadel-example" >"$out/zitadel.log" 2>&1) &
zpid=$!
trap 'kill $lpid $zpid 2>/dev/null || true; wait $lpid $zpid 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
  curl -fsS -o /dev/null "$issuer/readyz" 2>/dev/null && curl -fsS -o /dev/null "http://127.0.0.1:$zport/.well-known/openid-configuration" 2>/dev/null && break
  sleep 0.2
done
uids=${BENCH_DB_UIDS:-$(id -u postgres 2>/dev/null || true)}
for rep in $(seq 1 "$reps"); do
  for wl in ${WLS:-W1 W2 W3 W4 W5}; do
    "$work/bin/flowbench" -op zitadel -issuer "http://127.0.0.1:$zport" -pids "$zpid" -d "$dur" -c "$conc" -w "$wl" \
      -json "$out/z-$wl-$rep.json" >"$out/z-$wl-$rep.txt" 2>&1 || tail -2 "$out/z-$wl-$rep.txt"
    FLOWBENCH_PASSWORD=demo-student-pass FLOWBENCH_INTROSPECT="$rsid:$rssec" \
      "$work/bin/flowbench" -op lectern -issuer "$issuer" -client-id "$cid" -pids "$lpid" ${uids:+-uids "$uids"} -d "$dur" -c "$conc" -w "$wl" \
      -json "$out/l-$wl-$rep.json" >"$out/l-$wl-$rep.txt" 2>&1 || tail -2 "$out/l-$wl-$rep.txt"
  done
done
echo "RSS after the run: lectern $(awk '/VmRSS/{print $2}' "/proc/$lpid/status") kB, zitadel example $(awk '/VmRSS/{print $2}' "/proc/$zpid/status") kB"
python3 "$here/bench-side-by-side-table.py" "$out"
echo "results in $out"
