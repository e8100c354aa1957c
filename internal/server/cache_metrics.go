package server

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/lectern/lectern/authserver/keys"
	"github.com/lectern/lectern/tenant"
)

// cacheCollector exports the in-process per-site caches (the Host → site
// resolver and the key rings): look-ups by result, evictions and size, so
// that a hit rate is sum(rate(lectern_cache_requests_total{result=~"hit|stale"}))
// over the total. Both caches are bounded by entries.
type cacheCollector struct {
	sites *tenant.Resolver
	keys  *keys.Manager
}

var (
	cacheRequestsDesc = prometheus.NewDesc("lectern_cache_requests_total",
		"In-process cache look-ups by cache and result (hit; stale: served while revalidated in the background; miss: loaded first).",
		[]string{"cache", "result"}, nil)
	cacheEvictionsDesc = prometheus.NewDesc("lectern_cache_evictions_total",
		"Entries dropped to keep an in-process cache within its bound.", []string{"cache"}, nil)
	cacheEntriesDesc = prometheus.NewDesc("lectern_cache_entries",
		"Entries held by an in-process cache.", []string{"cache"}, nil)
)

func (c cacheCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- cacheRequestsDesc
	ch <- cacheEvictionsDesc
	ch <- cacheEntriesDesc
}

func (c cacheCollector) Collect(ch chan<- prometheus.Metric) {
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	s := c.sites.Stats()
	counter(cacheRequestsDesc, s.Hits, "sites", "hit")
	counter(cacheRequestsDesc, s.Stale, "sites", "stale")
	counter(cacheRequestsDesc, s.Misses, "sites", "miss")
	counter(cacheEvictionsDesc, s.Evictions, "sites")
	ch <- prometheus.MustNewConstMetric(cacheEntriesDesc, prometheus.GaugeValue, float64(s.Entries), "sites")
	k := c.keys.Stats()
	counter(cacheRequestsDesc, k.Hits, "key_rings", "hit")
	counter(cacheRequestsDesc, k.Misses, "key_rings", "miss")
	counter(cacheEvictionsDesc, k.Evictions, "key_rings")
	ch <- prometheus.MustNewConstMetric(cacheEntriesDesc, prometheus.GaugeValue, float64(k.Entries), "key_rings")
}
