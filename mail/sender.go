package mail

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	mrand "math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/lectern/lectern/storage"
)

// Outbox is what the sender loop needs of the store.
type Outbox interface {
	ClaimMail(ctx context.Context, owner string, now, leaseUntil time.Time, limit int) ([]storage.OutboxMessage, error)
	MailSent(ctx context.Context, id int64, owner string, at time.Time) error
	MailFailed(ctx context.Context, id int64, owner, reason string, next, at time.Time) error
	PruneMail(ctx context.Context, sentBefore, deadBefore time.Time) (int64, error)
}

// Defaults of SenderOptions.
const (
	DefaultLease         = 2 * time.Minute
	DefaultMaxAttempts   = 8
	DefaultBackoff       = 30 * time.Second
	DefaultMaxBackoff    = time.Hour
	DefaultPoll          = 5 * time.Second
	DefaultBatch         = 20
	DefaultSentRetention = 24 * time.Hour
	DefaultDeadRetention = 30 * 24 * time.Hour
	DefaultSendTimeout   = 30 * time.Second
)

// SenderOptions configures a Sender; zero fields take the defaults.
type SenderOptions struct {
	// Lease is how long a claimed message is left to its sender; it must
	// exceed SendTimeout, or a slow send could be claimed twice.
	Lease time.Duration
	// MaxAttempts: after this many failed attempts a message is dead
	// (logged at error level and kept, with its last error, for
	// DeadRetention).
	MaxAttempts int
	// Backoff is the wait after the first failure; it doubles with every
	// further failure (with jitter) up to MaxBackoff.
	Backoff, MaxBackoff time.Duration
	// Poll is how often the outbox is read when nobody calls Wake.
	Poll time.Duration
	// Batch is how many messages one claim takes.
	Batch int
	// SentRetention and DeadRetention bound how long sent and dead rows
	// stay in the outbox.
	SentRetention, DeadRetention time.Duration
	// SendTimeout bounds one delivery.
	SendTimeout time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Sender drains the outbox: it claims due messages under a lease, sends
// them, and records the outcome. Several senders (one per replica) may run
// on one database: claims never overlap, and a message whose sender died
// is claimed again when its lease ends (at-least-once delivery).
type Sender struct {
	store     Outbox
	transport Transport
	log       *slog.Logger
	o         SenderOptions
	owner     string
	wake      chan struct{}

	sent, failed, dead atomic.Int64
}

// NewSender returns a sender over store and transport.
func NewSender(store Outbox, transport Transport, logger *slog.Logger, o *SenderOptions) *Sender {
	var opts SenderOptions
	if o != nil {
		opts = *o
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&opts.Lease, DefaultLease)
	def(&opts.Backoff, DefaultBackoff)
	def(&opts.MaxBackoff, DefaultMaxBackoff)
	def(&opts.Poll, DefaultPoll)
	def(&opts.SentRetention, DefaultSentRetention)
	def(&opts.DeadRetention, DefaultDeadRetention)
	def(&opts.SendTimeout, DefaultSendTimeout)
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = DefaultMaxAttempts
	}
	if opts.Batch <= 0 {
		opts.Batch = DefaultBatch
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	var id [8]byte
	_, _ = rand.Read(id[:])
	return &Sender{store: store, transport: transport, log: logger, o: opts,
		owner: hex.EncodeToString(id[:]), wake: make(chan struct{}, 1)}
}

// Wake asks the loop to look at the outbox now (after an enqueue), rather
// than at its next poll.
func (s *Sender) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Counts returns how many messages this sender delivered, how many
// attempts failed, and how many messages it gave up (for /metrics).
func (s *Sender) Counts() (sent, failed, dead int64) {
	return s.sent.Load(), s.failed.Load(), s.dead.Load()
}

// Run sends until ctx ends, pruning old rows once an hour.
func (s *Sender) Run(ctx context.Context) {
	t := time.NewTicker(s.o.Poll)
	defer t.Stop()
	var lastPrune time.Time
	for {
		if _, err := s.Drain(ctx); err != nil && ctx.Err() == nil {
			s.log.WarnContext(ctx, "mail outbox not read; trying again", "err", err)
		}
		if now := s.o.Now(); now.Sub(lastPrune) >= time.Hour {
			if n, err := s.Prune(ctx); err != nil && ctx.Err() == nil {
				s.log.WarnContext(ctx, "mail outbox not pruned", "err", err)
			} else if n > 0 {
				s.log.InfoContext(ctx, "mail outbox pruned", "messages", n)
			}
			lastPrune = now
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.wake:
		}
	}
}

// Drain sends every message that is due now, batch after batch, and
// returns how many were delivered.
func (s *Sender) Drain(ctx context.Context) (int, error) {
	total := 0
	for ctx.Err() == nil {
		now := s.o.Now()
		msgs, err := s.store.ClaimMail(ctx, s.owner, now, now.Add(s.o.Lease), s.o.Batch)
		if err != nil {
			return total, err
		}
		for i := range msgs {
			if s.deliver(ctx, &msgs[i]) {
				total++
			}
		}
		if len(msgs) < s.o.Batch {
			break
		}
	}
	return total, ctx.Err()
}

// deliver sends one claimed message and records the outcome.
func (s *Sender) deliver(ctx context.Context, m *storage.OutboxMessage) bool {
	sctx, cancel := context.WithTimeout(ctx, s.o.SendTimeout)
	err := s.transport.Send(sctx, m)
	cancel()
	// The outcome is recorded even when ctx ended meanwhile: a sent
	// message must not be sent again because shutdown began.
	rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer rcancel()
	now := s.o.Now()
	if err == nil {
		s.sent.Add(1)
		if rerr := s.store.MailSent(rctx, m.ID, s.owner, now); rerr != nil {
			// Sent, but not recorded: it will be sent again when its lease
			// ends (at least once).
			s.log.WarnContext(ctx, "mail sent but not marked sent; it may be sent again", "id", m.ID, "err", rerr)
		}
		return true
	}
	s.failed.Add(1)
	var next time.Time
	if m.Attempts < s.o.MaxAttempts {
		next = now.Add(s.backoff(m.Attempts))
	}
	if rerr := s.store.MailFailed(rctx, m.ID, s.owner, err.Error(), next, now); rerr != nil && !errors.Is(rerr, storage.ErrNotFound) {
		s.log.WarnContext(ctx, "mail failure not recorded; it is tried again when its lease ends", "id", m.ID, "err", rerr)
	}
	if next.IsZero() {
		s.dead.Add(1)
		s.log.ErrorContext(ctx, "mail given up after its last attempt (dead-lettered in the outbox)",
			"id", m.ID, "purpose", m.Purpose, "site", int64(m.SiteID), "attempts", m.Attempts, "err", err)
	} else {
		s.log.WarnContext(ctx, "mail not delivered; trying again later",
			"id", m.ID, "purpose", m.Purpose, "attempt", m.Attempts, "retry_at", next, "err", err)
	}
	return false
}

// backoff is the wait after the n-th failed attempt: Backoff·2^(n-1),
// at most MaxBackoff, with ±20% jitter so that a fleet's retries spread.
func (s *Sender) backoff(n int) time.Duration {
	d := s.o.Backoff
	for i := 1; i < n && d < s.o.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, s.o.MaxBackoff)
	return time.Duration(float64(d) * (0.8 + 0.4*mrand.Float64()))
}

// Prune deletes sent rows older than SentRetention and dead rows older
// than DeadRetention.
func (s *Sender) Prune(ctx context.Context) (int64, error) {
	now := s.o.Now()
	return s.store.PruneMail(ctx, now.Add(-s.o.SentRetention), now.Add(-s.o.DeadRetention))
}
