package storage

import (
	"sync/atomic"
	"time"
)

// LatencyBounds are the upper bounds, in seconds, of a Latency's buckets:
// from a tenth of a millisecond (a loopback round trip on an idle machine)
// to a second (a command's timeout).
var LatencyBounds = [...]float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1}

// Latency counts how long callers wait on a backing service: a histogram
// over LatencyBounds that any number of goroutines may record into without
// a lock (a few atomic adds each). The metrics endpoint exports it; the
// backends keep one per kind of call (a Redis command, a batched database
// write), so that a slow flow can be traced to the wait that made it slow.
// The zero value is ready to use.
type Latency struct {
	buckets [len(LatencyBounds) + 1]atomic.Uint64 // one per bound, and one above the last
	sum     atomic.Int64                          // nanoseconds
}

// Observe records one call that took d.
func (l *Latency) Observe(d time.Duration) {
	s := d.Seconds()
	i := 0
	for i < len(LatencyBounds) && s > LatencyBounds[i] {
		i++
	}
	l.buckets[i].Add(1)
	l.sum.Add(int64(d))
}

// LatencySnapshot is a Latency at one moment, in the form Prometheus
// histograms take: Buckets[i] counts the calls that took at most
// LatencyBounds[i] (cumulative), Count all of them.
type LatencySnapshot struct {
	Count   uint64
	Sum     time.Duration
	Buckets []uint64
}

// Snapshot reads l. Calls recorded meanwhile may be in the buckets and not
// yet in the sum: a scrape's sum may trail its count by a few calls.
func (l *Latency) Snapshot() LatencySnapshot {
	s := LatencySnapshot{Buckets: make([]uint64, len(LatencyBounds))}
	for i := range l.buckets {
		s.Count += l.buckets[i].Load()
		if i < len(LatencyBounds) {
			s.Buckets[i] = s.Count
		}
	}
	s.Sum = time.Duration(l.sum.Load())
	return s
}
