#!/usr/bin/env python3
# EXPLAIN (ANALYZE, BUFFERS, WAL) of the batched refresh-token rotation
# (storage/sqlstore/grants_batch_pg.go, rotateBatchSQL) on live tokens of a
# database a benchmark left behind, inside a transaction that is rolled
# back. Run it twice: the first run shows the full-page images of pages not
# yet written since the last checkpoint, the second the warm cost.
#   scripts/explain-rotation.py <database URL> [batch size, default 16]
import os, subprocess, sys
url = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 16
src = open(os.path.join(os.path.dirname(__file__), '..', 'storage', 'sqlstore', 'grants_batch_pg.go')).read()
q = src[src.index('const rotateBatchSQL = `') + len('const rotateBatchSQL = `'):]
q = q[:q.index('`')]
for param, expr in [('$1::bigint[]', 'array_agg(site_id)'), ('$2::bytea[]', 'array_agg(token_hash)'),
                    ('$3::bytea[]', 'array_agg(sha256(token_hash))'), ('$4::timestamptz[]', 'array_agg(now())'),
                    ('$5::timestamptz[]', "array_agg(now() + interval '30 days')")]:
    q = q.replace(param, '(SELECT ' + expr + ' FROM pick)')
sql = f"""BEGIN;
CREATE TEMP TABLE pick AS SELECT site_id, token_hash FROM refresh_tokens
  WHERE used_at IS NULL AND revoked_at IS NULL AND expires_at > now() LIMIT {n};
EXPLAIN (ANALYZE, BUFFERS, WAL) {q};
ROLLBACK;
"""
r = subprocess.run(['psql', url, '-X', '-q'], input=sql, capture_output=True, text=True)
sys.stdout.write(r.stdout)
sys.stderr.write(r.stderr)
