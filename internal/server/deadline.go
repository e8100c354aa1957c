package server

import (
	"context"
	"sync/atomic"
	"time"
)

// deadlineCtx is a request's deadline, armed lazily. Most of what a
// request carries its context to (a database query, a cache command, a
// derived context) asks for Done, and the first call arms a real
// context.WithDeadline. A request that never does (a discovery document,
// answered from memory) costs no timer and no registration with its
// parent; for it Deadline and Err answer from the clock.
//
// The semantics are context.WithDeadline's: Err is non-nil exactly when
// the deadline has passed or the parent is done, and once it is, Done (if
// asked for afterwards) is already closed. Once armed, Value answers from
// the armed context, so that contexts derived from this one register with
// it directly (context's parentCancelCtx) instead of starting a goroutine.
type deadlineCtx struct {
	context.Context // the parent
	deadline        time.Time
	armed           atomic.Pointer[armedDeadline]
	released        atomic.Bool
}

type armedDeadline struct {
	ctx    context.Context
	cancel context.CancelFunc
}

// newDeadlineCtx returns parent with a deadline d from now (or parent's,
// if that is earlier). Call release when the request is done.
func newDeadlineCtx(parent context.Context, d time.Duration) *deadlineCtx {
	dl := time.Now().Add(d)
	if pd, ok := parent.Deadline(); ok && pd.Before(dl) {
		dl = pd
	}
	return &deadlineCtx{Context: parent, deadline: dl}
}

func (c *deadlineCtx) Deadline() (time.Time, bool) { return c.deadline, true }

func (c *deadlineCtx) Done() <-chan struct{} { return c.arm().Done() }

func (c *deadlineCtx) Err() error {
	if a := c.armed.Load(); a != nil {
		return a.ctx.Err()
	}
	// Unarmed, nothing recorded which came first: a parent canceled after
	// an unobserved deadline reads as Canceled (the client left; what it
	// would have been answered matters to no one).
	if err := c.Context.Err(); err != nil {
		return err
	}
	if c.released.Load() || !time.Now().Before(c.deadline) {
		// Arm (canceled at once if released), so that Done and
		// context.Cause agree from now on.
		return c.arm().Err()
	}
	return nil
}

func (c *deadlineCtx) Value(key any) any {
	if a := c.armed.Load(); a != nil {
		return a.ctx.Value(key)
	}
	return c.Context.Value(key)
}

// arm returns the real deadline context, making it on first use.
func (c *deadlineCtx) arm() context.Context {
	if a := c.armed.Load(); a != nil {
		return a.ctx
	}
	ctx, cancel := context.WithDeadline(c.Context, c.deadline)
	if !c.armed.CompareAndSwap(nil, &armedDeadline{ctx, cancel}) {
		cancel()
		return c.armed.Load().ctx
	}
	if c.released.Load() {
		// Armed while the request was being released: release may not
		// have seen it.
		cancel()
	}
	return ctx
}

// release stops the deadline's timer, if it was armed; what still holds
// the context sees it canceled.
func (c *deadlineCtx) release() {
	c.released.Store(true)
	if a := c.armed.Load(); a != nil {
		a.cancel()
	}
}

func (c *deadlineCtx) String() string { return "server.deadlineCtx" }
