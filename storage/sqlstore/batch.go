package sqlstore

import (
	"context"
	"sync"
	"time"

	"github.com/lectern/lectern/storage"
)

// batcher groups concurrent calls into one database statement, the way a
// database groups commits: a worker takes whatever has queued while its
// previous batch ran (no artificial delay, so an idle server answers at
// once), and under load one statement and one commit serve many requests.
// Each call still gets its own answer.
type batcher[Req, Res any] struct {
	queue chan *batchCall[Req, Res]
	max   int
	run   func(ctx context.Context, calls []*batchCall[Req, Res])
	wg    sync.WaitGroup
	// wait is how long calls waited for their answer: queued behind the
	// batch in flight, then their own batch's statement and commit.
	wait storage.Latency
}

type batchCall[Req, Res any] struct {
	req  Req
	res  Res
	err  error
	done chan struct{}
}

// batchTimeout bounds one batch statement.
const batchTimeout = 10 * time.Second

func newBatcher[Req, Res any](workers, max int, run func(context.Context, []*batchCall[Req, Res])) *batcher[Req, Res] {
	b := &batcher[Req, Res]{queue: make(chan *batchCall[Req, Res], workers*max), max: max, run: run}
	for range workers {
		b.wg.Add(1)
		go b.work()
	}
	return b
}

func (b *batcher[Req, Res]) work() {
	defer b.wg.Done()
	for first := range b.queue {
		calls := []*batchCall[Req, Res]{first}
	drain:
		for len(calls) < b.max {
			select {
			case c, ok := <-b.queue:
				if !ok {
					break drain
				}
				calls = append(calls, c)
			default:
				break drain
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), batchTimeout)
		b.run(ctx, calls)
		cancel()
		for _, c := range calls {
			close(c.done)
		}
	}
}

// do queues req and waits for its answer. If ctx ends first, do returns
// ctx.Err(); the statement may still run (as when a connection drops after a
// commit): callers treat that like any failed request.
func (b *batcher[Req, Res]) do(ctx context.Context, req Req) (Res, error) {
	start := time.Now()
	defer func() { b.wait.Observe(time.Since(start)) }()
	c := &batchCall[Req, Res]{req: req, done: make(chan struct{})}
	var zero Res
	select {
	case b.queue <- c:
	case <-ctx.Done():
		return zero, ctx.Err()
	}
	select {
	case <-c.done:
		return c.res, c.err
	case <-ctx.Done():
		return zero, ctx.Err()
	}
}

// close stops the workers after the queued calls ran.
func (b *batcher[Req, Res]) close() {
	close(b.queue)
	b.wg.Wait()
}
