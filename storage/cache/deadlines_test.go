package cache

import (
	"context"
	"errors"
	"testing"
	"time"
)

// Commands starting within one slot share one deadline context, which
// gives each of them at least the timeout and at most the timeout plus a
// slot; the next slot gets a context of its own; Close's stop ends it.
func TestSharedDeadlines(t *testing.T) {
	const timeout = 200 * time.Millisecond
	s := newSharedDeadlines(timeout)
	if s.slot != timeout/20 {
		t.Fatalf("slot %v, want %v", s.slot, timeout/20)
	}
	start := time.Now()
	ctx, dl := s.at(start)
	if got, ok := ctx.Deadline(); !ok || !got.Equal(dl) {
		t.Fatalf("context deadline %v (%v), reported %v", got, ok, dl)
	}
	for _, now := range []time.Time{start, start.Add(s.slot / 2), start.Add(s.slot - time.Nanosecond)} {
		c, d := s.at(now)
		if c != ctx {
			t.Fatalf("a command %v into the slot got another context", now.Sub(start))
		}
		if left := d.Sub(now); left < timeout || left > timeout+s.slot {
			t.Fatalf("a command %v into the slot has %v; want %v to %v", now.Sub(start), left, timeout, timeout+s.slot)
		}
	}
	next, ndl := s.at(start.Add(s.slot))
	if next == ctx || ndl.Sub(start.Add(s.slot)) != timeout+s.slot {
		t.Fatalf("the next slot: same context %v, deadline %v after its start", next == ctx, ndl.Sub(start.Add(s.slot)))
	}
	select {
	case <-ctx.Done():
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) || time.Since(start) < timeout {
			t.Fatalf("the first slot's context ended after %v: %v", time.Since(start), ctx.Err())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the first slot's context never expired")
	}
	s.stop()
	if !errors.Is(next.Err(), context.Canceled) {
		t.Fatalf("after stop: %v", next.Err())
	}
}

// Many commands racing to open a slot all get the one that won.
func TestSharedDeadlinesRace(t *testing.T) {
	s := newSharedDeadlines(time.Hour)
	defer s.stop()
	now := time.Now()
	got := make(chan context.Context, 64)
	for range cap(got) {
		go func() { c, _ := s.at(now); got <- c }()
	}
	first := <-got
	for range cap(got) - 1 {
		if c := <-got; c != first {
			t.Fatal("two contexts for one slot")
		}
	}
	if first.Err() != nil {
		t.Fatalf("the winning slot's context: %v", first.Err())
	}
}
