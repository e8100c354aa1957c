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
// Packages run their tests in parallel, so each uses ports of its own.
// Taken so far (issue 15's range, 27000-27999):
//
//	storage/cache        cluster 27001-27006 (bus 27011-27016), sentinel group 27101-27103 + 27201-27203,
//	                     a second sentinel group 27104-27106 + 27204-27206, single servers 27301-27302
//	integration          cluster 27021-27026 (bus 27031-27036), sentinel group 27111-27113 + 27211-27213,
//	                     single servers 27311-27312
//	internal/redistest   cluster 27041-27046 (bus 27051-27056)
//	internal/server      cluster 27061-27066 (bus 27071-27076)
//	scripts/bench-redis-outage.sh  lectern 27380, redis-server 27381
//	cmd/lectern-faults   (make faults) 33000-33999: free ports found at run time
//	                     (NewServer, NewSentinel, NewCluster)
//
// redistest drives the servers through redis-cli and imports nothing of
// ours but storage/storagetest (for the "services required" switch); in
// particular not go-redis, which only storage/cache imports.
package redistest
