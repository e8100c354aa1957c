#!/usr/bin/env bash
# Redis bytes per key kind (deploy/README.md, "Redis sizing"): starts a
# `lectern serve` of this tree on the embedded database and the shared
# Redis under a key prefix of its own, plays one member's sign-in with
# consent, a code exchange, a second authorization (a code left
# unredeemed), a revocation, one anonymous authorization and one wrong
# password, then prints
# MEMORY USAGE (key, value and Redis' per-key overhead) of every key it
# made, grouped by kind. Deletes its keys and stops only the server it
# started.
set -euo pipefail
cd "$(dirname "$0")/.."
PORT=${SIZING_PORT:-26082}
REDIS=${SIZING_REDIS_URL:-redis://127.0.0.1:6379/0}
PREFIX="lectern-sizing-$$:"
go build -o bin/lectern ./cmd/lectern
DATA=$(mktemp -d)
cleanup() {
  kill "$SERVER" 2>/dev/null || true
  wait "$SERVER" 2>/dev/null || true
  # redis_rate puts its "rate:" before the prefix.
  for pat in "${PREFIX}*" "rate:${PREFIX}*"; do
    redis-cli -u "$REDIS" --scan --pattern "$pat" | xargs -r -n 500 redis-cli -u "$REDIS" DEL >/dev/null
  done
  rm -rf "$DATA"
}
LECTERN_DATA_DIR=$DATA REDIS_URL=$REDIS LECTERN_REDIS_PREFIX=$PREFIX LECTERN_ADDR=127.0.0.1:$PORT \
LECTERN_LOG_LEVEL=warn LECTERN_ACCESS_LOG=false bin/lectern serve >/dev/null 2>"$DATA/server.log" &
SERVER=$!
trap cleanup EXIT
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done
O="http://localhost:$PORT"
JAR=$DATA/jar
c() { curl -s -b "$JAR" -c "$JAR" --connect-to "localhost:$PORT:127.0.0.1:$PORT" "$@"; }
field() { sed -n "s/.*name=\"$1\" value=\"\([^\"]*\)\".*/\1/p" | head -1; }
VERIFIER=dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk
AUTH="$O/oauth/authorize?response_type=code&client_id=demo-member-app&redirect_uri=http%3A%2F%2F127.0.0.1%3A53682%2Fcallback&scope=openid%20profile%20email%20account%3Aread&state=Xk2pV9qLr4sT7uW0yZ3bC6dF8gH1jK5mN9oQ2rS4tU7&nonce=Ab3dE5fG7hJ9kL2mN4pQ6rS8tV0wX2yZ4aB6cD8eF0g&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256&resource=http%3A%2F%2Flocalhost%3A$PORT"
LOGIN=$(c -o /dev/null -w '%{redirect_url}' "$AUTH")
REQ=${LOGIN##*auth_request=}
CSRF=$(c "$LOGIN" | field csrf_token)
CONSENT=$(c -o /dev/null -w '%{redirect_url}' --data-urlencode "csrf_token=$CSRF" --data-urlencode "auth_request=$REQ" \
  --data-urlencode "email=student@demo.test" --data-urlencode "password=demo-student-pass" "$O/login")
CSRF=$(c "$CONSENT" | field csrf_token)
BACK=$(c -o /dev/null -w '%{redirect_url}' --data-urlencode "csrf_token=$CSRF" --data-urlencode "auth_request=$REQ" --data-urlencode "decision=approve" "$O/consent")
CODE=$(sed -n 's/.*[?&]code=\([^&]*\).*/\1/p' <<<"$BACK")
[ -n "$CODE" ] || { echo "no code: $BACK" >&2; exit 1; }
TOKEN=$(c -d grant_type=authorization_code -d "code=$CODE" -d client_id=demo-member-app -d "code_verifier=$VERIFIER" \
  --data-urlencode "redirect_uri=http://127.0.0.1:53682/callback" --data-urlencode "resource=$O" "$O/api/oauth/token")
ACCESS=$(sed -n 's/.*"access_token":"\([^"]*\)".*/\1/p' <<<"$TOKEN")
c -o /dev/null "$AUTH"   # signed in, consent remembered: a code, not redeemed
c -o /dev/null -d "token=$ACCESS" -d client_id=demo-member-app "$O/api/oauth/revoke"
curl -s -o /dev/null --connect-to "localhost:$PORT:127.0.0.1:$PORT" "$AUTH"   # anonymous: a pending request
JAR=$DATA/jar2   # a wrong password: the sign-in failure counters
CSRF=$(c "$O/login" | field csrf_token)
c -o /dev/null --data-urlencode "csrf_token=$CSRF" --data-urlencode "email=owner@demo.test" --data-urlencode "password=wrong" "$O/login"
printf '| kind | keys | bytes per key (MEMORY USAGE) | value bytes |\n|---|---|---|---|\n'
{ redis-cli -u "$REDIS" --scan --pattern "${PREFIX}*"; redis-cli -u "$REDIS" --scan --pattern "rate:${PREFIX}*"; } | while read -r k; do
  rest=${k#rate:}; rest=${rest#"$PREFIX"}; rest=${rest#*\}:}; kind=${rest%%:*}
  case $k in
    *"}:rl:"*) rest=${rest#*:}; kind="rl:${rest%%:*}" ;;
    *"}:loginfail:all") kind="loginfail(account)" ;;
    *"{a"*"}:loginfail:"*) kind="loginfail(account,IP)" ;;
    *"{ip"*"}:loginfail") kind="loginfail(IP)" ;;
  esac
  echo "$kind $(redis-cli -u "$REDIS" MEMORY USAGE "$k" SAMPLES 0) $(redis-cli -u "$REDIS" STRLEN "$k" 2>/dev/null || echo 0)"
done | sort | awk '{n[$1]++; m[$1]+=$2; v[$1]+=$3} END {for (k in n) printf "| %s | %d | %d | %d |\n", k, n[k], m[k]/n[k], v[k]/n[k]}' | sort
