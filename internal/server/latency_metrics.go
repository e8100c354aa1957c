package server

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/storage/cache"
	"github.com/lectern/lectern/storage/sqlstore"
)

// latencyCollector exports how long requests wait on the backing services
// where the token path waits most (docs/PERFORMANCE.md, issue 17): each
// Redis command through the autopipeliner, and each batched database write
// (a code exchange's new grant, a refresh's rotation), queueing included.
// A flow's latency that the CPU does not explain is found here.
type latencyCollector struct {
	redis *cache.Redis    // nil without Redis
	store *sqlstore.Store // its batches: PostgreSQL only
}

var (
	redisCommandDesc = prometheus.NewDesc("lectern_redis_command_duration_seconds",
		"How long a Redis command (GET, MGET, SET, GETDEL, DEL, … through the autopipeliner) kept its caller waiting: queueing, round trip and wake-up.",
		nil, nil)
	dbBatchDesc = prometheus.NewDesc("lectern_db_batch_wait_seconds",
		"How long a batched token-path write kept its caller waiting, by batch (grants: code exchanges; rotations: refreshes): queued behind the batch in flight, then its own statement and commit.",
		[]string{"batch"}, nil)
)

func registerLatencyMetrics(reg prometheus.Registerer, c storage.Cache, st *sqlstore.Store) {
	rc, _ := redisOf(c)
	if rc == nil && st.BatchLatency() == nil {
		return // the embedded default: nothing batched, no Redis
	}
	reg.MustRegister(latencyCollector{redis: rc, store: st})
}

func (l latencyCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- redisCommandDesc
	ch <- dbBatchDesc
}

func (l latencyCollector) Collect(ch chan<- prometheus.Metric) {
	if l.redis != nil {
		ch <- histogram(redisCommandDesc, l.redis.Latency())
	}
	for name, s := range l.store.BatchLatency() {
		ch <- histogram(dbBatchDesc, s, name)
	}
}

func histogram(d *prometheus.Desc, s storage.LatencySnapshot, labels ...string) prometheus.Metric {
	buckets := make(map[float64]uint64, len(storage.LatencyBounds))
	for i, b := range storage.LatencyBounds {
		buckets[b] = s.Buckets[i]
	}
	return prometheus.MustNewConstHistogram(d, s.Count, s.Sum.Seconds(), buckets, labels...)
}
