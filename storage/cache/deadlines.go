package cache

import (
	"context"
	"sync/atomic"
	"time"
)

// sharedDeadlines bounds the commands of callers without a nearer deadline
// of their own (a request's is 20 s) by one deadline context per slot
// instead of one context.WithTimeout per command: every command that
// starts within a slot (a twentieth of the timeout) shares a context that
// expires timeout after the slot's end, so each waits at least timeout and
// at most timeout plus a slot. Deriving a timer context from the caller's
// per command (its timer, its registration with the caller's context and
// both undone after) cost about 3% of the server's CPU in the code flow.
//
// What the shared context gives up is the caller's cancellation: a caller
// whose context is canceled (a client that went away) while its command
// waits on a stalled Redis returns when the command's timeout passes, not
// at once. A caller whose deadline is nearer than the shared one, or whose
// context is traced (the command's span needs it), keeps its own context
// (guard).
type sharedDeadlines struct {
	timeout time.Duration
	slot    time.Duration
	cur     atomic.Pointer[deadlineSlot]
}

type deadlineSlot struct {
	ctx      context.Context
	cancel   context.CancelFunc // run by the context's own timer at deadline, or by stop
	until    time.Time          // commands starting before it share ctx
	deadline time.Time
}

func newSharedDeadlines(timeout time.Duration) *sharedDeadlines {
	return &sharedDeadlines{timeout: timeout, slot: max(timeout/20, time.Millisecond)}
}

// at returns the shared context for a command starting at now, and its
// deadline.
func (s *sharedDeadlines) at(now time.Time) (context.Context, time.Time) {
	cur := s.cur.Load()
	if cur != nil && now.Before(cur.until) {
		return cur.ctx, cur.deadline
	}
	until := now.Add(s.slot)
	next := &deadlineSlot{until: until, deadline: until.Add(s.timeout)}
	next.ctx, next.cancel = context.WithDeadline(context.Background(), next.deadline)
	if !s.cur.CompareAndSwap(cur, next) {
		// Another command opened the slot first.
		next.cancel()
		if cur = s.cur.Load(); cur != nil {
			return cur.ctx, cur.deadline
		}
	}
	return next.ctx, next.deadline
}

// stop ends the current slot's context (Close).
func (s *sharedDeadlines) stop() {
	if cur := s.cur.Load(); cur != nil {
		cur.cancel()
	}
}
