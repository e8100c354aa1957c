#!/usr/bin/env bash
# Redis bytes per pending authorization request (issue 14): starts a
# `lectern serve` of this tree on the embedded database and the shared
# Redis under a key prefix of its own, sends N anonymous authorization
# requests for the demo member client (typical parameters: 43-character
# state and nonce, as x/oauth2 and the MCP SDKs send), and reports
# MEMORY USAGE of the pending-request keys it created (key, value and
# Redis' per-key overhead). Deletes its keys and stops only the server it
# started. PENDING_STATE_BYTES=512 sends state and nonce of that length
# instead (the largest a request may store).
# Usage: scripts/pending-bytes.sh [N] [lectern binary]
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-200}
BIN=${2:-}
PORT=${PENDING_PORT:-26081}
REDIS=${PENDING_REDIS_URL:-redis://127.0.0.1:6379/0}
PREFIX="lectern-pending-$$:"
if [ -z "$BIN" ]; then
  go build -o bin/lectern ./cmd/lectern
  BIN=bin/lectern
fi
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
# Limits high enough that every request is stored (flags a binary
# without them ignores through the environment).
LECTERN_LIMIT_AUTHORIZE_PER_IP=1000000 LECTERN_LIMIT_AUTHORIZE_PER_SITE=1000000 LECTERN_LIMIT_PENDING_AUTHORIZATIONS=1000000 \
LECTERN_DATA_DIR=$DATA REDIS_URL=$REDIS LECTERN_REDIS_PREFIX=$PREFIX LECTERN_ADDR=127.0.0.1:$PORT \
LECTERN_LOG_LEVEL=warn LECTERN_ACCESS_LOG=false "$BIN" serve >/dev/null 2>"$DATA/server.log" &
SERVER=$!
trap cleanup EXIT
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done
ORIGIN="http://localhost:$PORT"
for i in $(seq 1 "$N"); do
  STATE=$(head -c 32 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')
  NONCE=$(head -c 32 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')
  if [ -n "${PENDING_STATE_BYTES:-}" ]; then
    PAD=$(printf "%${PENDING_STATE_BYTES}s" | tr ' ' x)
    STATE=${STATE}${PAD:43}; NONCE=${NONCE}${PAD:43}
  fi
  curl -s -o /dev/null -w '%{http_code}\n' -H "Host: localhost:$PORT" \
    "http://127.0.0.1:$PORT/oauth/authorize?response_type=code&client_id=demo-member-app&redirect_uri=http%3A%2F%2F127.0.0.1%3A53682%2Fcallback&scope=openid%20profile%20email%20account%3Aread&state=$STATE&nonce=$NONCE&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256&resource=http%3A%2F%2Flocalhost%3A$PORT"
done | sort | uniq -c | sed 's/^/authorize answers: /' >&2
KEYS=$(redis-cli -u "$REDIS" --scan --pattern "${PREFIX}*:authreq:*")
COUNT=0; TOTAL=0; VALUE=0
for k in $KEYS; do
  m=$(redis-cli -u "$REDIS" MEMORY USAGE "$k" SAMPLES 0)
  v=$(redis-cli -u "$REDIS" STRLEN "$k")
  COUNT=$((COUNT + 1)); TOTAL=$((TOTAL + m)); VALUE=$((VALUE + v))
done
[ "$COUNT" -gt 0 ] || { echo "no pending requests stored" >&2; exit 1; }
echo "pending requests: $COUNT; value bytes (mean): $((VALUE / COUNT)); MEMORY USAGE bytes (mean, key+value+overhead): $((TOTAL / COUNT))"
