package server

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/lectern/lectern/storage"
)

// registerCacheMetrics exports the Redis circuit breaker: whether it is
// open now (every cache call failing fast, the database answering) and how
// often it opened. The in-memory cache has no breaker and no metrics.
func registerCacheMetrics(reg prometheus.Registerer, c storage.Cache) {
	rc, ok := redisOf(c)
	if !ok {
		return
	}
	reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "lectern_redis_breaker_open",
			Help: "1 while the Redis circuit breaker is open (cache calls fail fast; callers use the database), else 0.",
		}, func() float64 {
			if rc.Breaker().Open {
				return 1
			}
			return 0
		}),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "lectern_redis_breaker_opens_total",
			Help: "How often the Redis circuit breaker opened.",
		}, func() float64 { return float64(rc.Breaker().Opens) }),
	)
}
