package server

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/lectern/lectern/authserver/keys"
	"github.com/lectern/lectern/discovery"
	"github.com/lectern/lectern/tenant"
)

// cacheCollector exports the in-process per-site caches (the Host → site
// resolver, the key rings and the serialized metadata documents): look-ups by result, evictions and size, so
// that a hit rate is sum(rate(lectern_cache_requests_total{result=~"hit|stale"}))
// over the total. Each is bounded, by entries or bytes.
type cacheCollector struct {
	sites *tenant.Resolver
	keys  *keys.Manager
	docs  *discovery.Handler
}

var (
	cacheRequestsDesc = prometheus.NewDesc("lectern_cache_requests_total",
		"In-process cache look-ups by cache and result (hit; stale: served while revalidated in the background; miss: loaded first).",
		[]string{"cache", "result"}, nil)
	cacheEvictionsDesc = prometheus.NewDesc("lectern_cache_evictions_total",
		"Entries dropped to keep an in-process cache within its bound.", []string{"cache"}, nil)
	cacheEntriesDesc = prometheus.NewDesc("lectern_cache_entries",
		"Entries held by an in-process cache.", []string{"cache"}, nil)
	cacheBytesDesc = prometheus.NewDesc("lectern_cache_bytes",
		"Bytes held by an in-process cache bounded by size.", []string{"cache"}, nil)
)

func (c cacheCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- cacheRequestsDesc
	ch <- cacheEvictionsDesc
	ch <- cacheEntriesDesc
	ch <- cacheBytesDesc
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
	d := c.docs.Stats()
	counter(cacheRequestsDesc, d.Hits, "metadata_documents", "hit")
	counter(cacheRequestsDesc, d.Misses, "metadata_documents", "miss")
	counter(cacheEvictionsDesc, d.Evictions, "metadata_documents")
	ch <- prometheus.MustNewConstMetric(cacheEntriesDesc, prometheus.GaugeValue, float64(d.Entries), "metadata_documents")
	ch <- prometheus.MustNewConstMetric(cacheBytesDesc, prometheus.GaugeValue, float64(d.Bytes), "metadata_documents")
}
