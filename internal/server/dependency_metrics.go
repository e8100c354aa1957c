package server

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// dependencyCollector reports, at each scrape, whether the database and
// the cache answer (the checks of /readyz): the alerts on an unavailable
// database or Redis and on a replica that is not ready read these.
type dependencyCollector struct{ app *App }

var (
	dependencyUpDesc = prometheus.NewDesc("lectern_dependency_up",
		"Whether a backing service answered its check at this scrape (1) or not (0).", []string{"dependency"}, nil)
	readyDesc = prometheus.NewDesc("lectern_ready",
		"Whether this replica is ready (every dependency answered; what /readyz reports).", nil, nil)
)

func (d dependencyCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- dependencyUpDesc
	ch <- readyDesc
}

func (d dependencyCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	ready := 1.0
	for name, err := range d.app.ready(ctx) {
		up := 1.0
		if err != nil {
			up, ready = 0, 0
		}
		ch <- prometheus.MustNewConstMetric(dependencyUpDesc, prometheus.GaugeValue, up, name)
	}
	ch <- prometheus.MustNewConstMetric(readyDesc, prometheus.GaugeValue, ready)
}
