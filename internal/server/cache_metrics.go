package server

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/lectern/lectern/discovery"
)

// cacheStats is one in-process cache's counters at a scrape.
type cacheStats struct {
	hits, stale, misses, evictions uint64
	entries                        int
	bytes                          int // -1: bounded by entries, not bytes
}

// cacheSource names a cache and reads its counters.
type cacheSource struct {
	name  string
	stats func() cacheStats
}

// cacheCollector exports the in-process caches (the Host → site resolver,
// the key rings, the serialized metadata documents, the verified-token
// cache, the client cache): look-ups by result, evictions and size, so that
// a hit rate is sum(rate(lectern_cache_requests_total{result=~"hit|stale"}))
// over the total. Each is bounded, by entries or bytes.
type cacheCollector []cacheSource

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
	for _, src := range c {
		s := src.stats()
		counter(cacheRequestsDesc, s.hits, src.name, "hit")
		counter(cacheRequestsDesc, s.stale, src.name, "stale")
		counter(cacheRequestsDesc, s.misses, src.name, "miss")
		counter(cacheEvictionsDesc, s.evictions, src.name)
		ch <- prometheus.MustNewConstMetric(cacheEntriesDesc, prometheus.GaugeValue, float64(s.entries), src.name)
		if s.bytes >= 0 {
			ch <- prometheus.MustNewConstMetric(cacheBytesDesc, prometheus.GaugeValue, float64(s.bytes), src.name)
		}
	}
}

// cacheCollector lists the in-process caches of s (docs: the metadata
// handler, built with the routes).
func (s *Server) cacheCollector(docs *discovery.Handler) cacheCollector {
	return cacheCollector{
		{"sites", func() cacheStats {
			st := s.resolver.Stats()
			return cacheStats{hits: st.Hits, stale: st.Stale, misses: st.Misses, evictions: st.Evictions, entries: st.Entries, bytes: -1}
		}},
		{"key_rings", func() cacheStats {
			st := s.app.Keys.Stats()
			return cacheStats{hits: st.Hits, misses: st.Misses, evictions: st.Evictions, entries: st.Entries, bytes: -1}
		}},
		{"metadata_documents", func() cacheStats {
			st := docs.Stats()
			return cacheStats{hits: st.Hits, misses: st.Misses, evictions: st.Evictions, entries: st.Entries, bytes: st.Bytes}
		}},
		{"verified_tokens", func() cacheStats {
			st := s.verifier.CacheStats()
			return cacheStats{hits: st.Hits, misses: st.Misses, evictions: st.Evictions, entries: st.Entries, bytes: -1}
		}},
		{"clients", func() cacheStats {
			st := s.auth.ClientCacheStats()
			return cacheStats{hits: st.Hits, misses: st.Misses, evictions: st.Evictions, entries: st.Entries, bytes: -1}
		}},
	}
}
