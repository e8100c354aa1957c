package storage

import (
	"sync"
	"testing"
	"time"
)

func TestLatencyBuckets(t *testing.T) {
	var l Latency
	for _, d := range []time.Duration{
		50 * time.Microsecond,  // ≤ 0.1 ms
		100 * time.Microsecond, // on the bound: ≤ 0.1 ms
		700 * time.Microsecond, // ≤ 1 ms
		3 * time.Millisecond,   // ≤ 5 ms
		2 * time.Second,        // above every bound
	} {
		l.Observe(d)
	}
	s := l.Snapshot()
	if s.Count != 5 {
		t.Fatalf("count %d, want 5", s.Count)
	}
	if want := 50*time.Microsecond + 100*time.Microsecond + 700*time.Microsecond + 3*time.Millisecond + 2*time.Second; s.Sum != want {
		t.Errorf("sum %v, want %v", s.Sum, want)
	}
	want := map[float64]uint64{0.0001: 2, 0.00025: 2, 0.0005: 2, 0.001: 3, 0.0025: 3, 0.005: 4, 1: 4}
	for i, b := range LatencyBounds {
		if w, ok := want[b]; ok && s.Buckets[i] != w {
			t.Errorf("bucket ≤ %gs holds %d, want %d (all: %v)", b, s.Buckets[i], w, s.Buckets)
		}
	}
}

func TestLatencyConcurrent(t *testing.T) {
	var l Latency
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				l.Observe(time.Millisecond)
			}
		})
	}
	wg.Wait()
	if s := l.Snapshot(); s.Count != 8000 || s.Sum != 8000*time.Millisecond || s.Buckets[3] != 8000 || s.Buckets[2] != 0 {
		t.Errorf("after 8,000 concurrent 1 ms calls: %+v", s)
	}
}

// What a timed call pays for its record (docs/PERFORMANCE.md, ninth pass).
func BenchmarkLatencyObserve(b *testing.B) {
	var l Latency
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			start := time.Now()
			l.Observe(time.Since(start))
		}
	})
}
