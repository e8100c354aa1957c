package sqlstore

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestBatcherAnswersEveryCallOnce runs many concurrent calls through a
// batcher whose batches are slow: every caller gets its own answer, no
// more than workers batches run at once, no batch exceeds max, and calls
// that arrive while batches run share later batches.
func TestBatcherAnswersEveryCallOnce(t *testing.T) {
	for _, workers := range []int{1, 2} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			var running, peak, batches, calls atomic.Int64
			b := newBatcher(workers, 8, func(_ context.Context, cs []*batchCall[int, int]) {
				if n := running.Add(1); n > peak.Load() {
					peak.Store(n)
				}
				if len(cs) > 8 {
					t.Errorf("a batch of %d calls, max 8", len(cs))
				}
				batches.Add(1)
				calls.Add(int64(len(cs)))
				time.Sleep(2 * time.Millisecond)
				for _, c := range cs {
					c.res = c.req * 2
				}
				running.Add(-1)
			})
			const n = 400
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					got, err := b.do(context.Background(), i)
					if err != nil || got != i*2 {
						t.Errorf("call %d: got %d, %v; want %d", i, got, err, i*2)
					}
				})
			}
			wg.Wait()
			b.close()
			if peak.Load() > int64(workers) {
				t.Errorf("%d batches ran at once, workers %d", peak.Load(), workers)
			}
			if calls.Load() != n {
				t.Errorf("%d calls ran, want %d", calls.Load(), n)
			}
			if batches.Load() >= n/2 {
				t.Errorf("%d batches for %d concurrent calls: they were not grouped", batches.Load(), n)
			}
		})
	}
}
