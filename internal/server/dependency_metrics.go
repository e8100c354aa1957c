package server

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// dependencyCollector reports, at each scrape, whether the database and
// the cache answer (the checks of /readyz): the alerts on an unavailable
// database or Redis and on a replica that is not ready read these.
type dependencyCollector struct{ s *Server }

var (
	dependencyUpDesc = prometheus.NewDesc("lectern_dependency_up",
		"Whether a backing service answered its check at this scrape (1) or not (0).", []string{"dependency"}, nil)
	readyDesc = prometheus.NewDesc("lectern_ready",
		"Whether this replica is ready (what /readyz reports: every dependency takes writes and it is not draining).", nil, nil)
)

func (d dependencyCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- dependencyUpDesc
	ch <- readyDesc
}

func (d dependencyCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	// The same (cached) check /readyz answers with, so a scrape costs no
	// more than a probe and says the same.
	r := d.s.readiness.check(ctx, d.s)
	for name, state := range r.Checks {
		up := 0.0
		if state == "ok" {
			up = 1
		}
		ch <- prometheus.MustNewConstMetric(dependencyUpDesc, prometheus.GaugeValue, up, name)
	}
	ready := 0.0
	if r.Status == "ok" {
		ready = 1
	}
	ch <- prometheus.MustNewConstMetric(readyDesc, prometheus.GaugeValue, ready)
}
