// Package redistest is test support: it starts real Redis topologies —
// a Redis Cluster (3 masters, 3 replicas) and a Sentinel group (a master,
// 2 replicas, 3 sentinels) — from Debian's redis-server and
// redis-sentinel binaries, on ports the caller chooses, in temporary
// directories, and stops them by PID. Each node can be killed, stopped and
// restarted, so fault tests can take a master away and watch a failover.
//
// The binaries are found on PATH; when they are absent the test is skipped
// with a message, or fails when LECTERN_REQUIRE_SERVICES=1 (CI).
//
// redistest drives the servers through redis-cli and imports nothing of
// ours but storage/storagetest (for the "services required" switch); in
// particular not go-redis, which only storage/cache imports.
package redistest
