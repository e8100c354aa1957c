package keys

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// RotationLease is the name of the lease the rotation scheduler holds.
const RotationLease = "key-rotation"

// Defaults of SchedulerOptions.
const (
	DefaultSchedulePrePublish = 24 * time.Hour
	DefaultLeaseTTL           = 2 * time.Minute
	DefaultScheduleInterval   = time.Minute
	defaultScheduleBatch      = 500
)

// SchedulerOptions tunes a Scheduler. A nil *SchedulerOptions means
// defaults.
type SchedulerOptions struct {
	// Holder names this process in the lease; default host name, pid and
	// a random suffix.
	Holder string
	// PeriodOf returns a site's rotation period (a site setting); nil, or a
	// zero answer, means the Manager's RotationPeriod.
	PeriodOf func(ctx context.Context, site tenant.ID) (time.Duration, error)
	// PrePublish is how long the next key is in the JWKS before it signs.
	// Default 24h.
	PrePublish time.Duration
	// LeaseTTL is how long the lease outlives a holder that stopped
	// renewing it (a replica that died mid-pass). Default 2m.
	LeaseTTL time.Duration
	// Interval is the time between passes. Default 1m.
	Interval time.Duration
	// Batch bounds the keys one pass handles per step. Default 500.
	Batch int
	// Announce tells the other replicas that a site's ring changed.
	Announce func(ctx context.Context, site tenant.ID)
	// Logger; default the Manager's.
	Logger *slog.Logger
}

// Scheduler rotates signing keys when they are due (RotateAt): it
// publishes the next key PrePublish ahead of use, persists its activation
// when the time comes (the previous key retires, and stays in the JWKS for
// the Manager's Retain), and schedules keys made before scheduling. Every
// replica runs one; the lease lets one at a time work. Every step is
// idempotent and the rotation of one site is one transaction, so a replica
// that dies mid-pass leaves nothing half done: its lease expires and the
// next holder carries on.
type Scheduler struct {
	m     *Manager
	store storage.RotationStore
	// audit records the rotations it starts in their site's audit log,
	// when the store keeps one.
	audit storage.AuditStore
	o     SchedulerOptions
	log   *slog.Logger
}

// SchedulerActor is the actor of the audit events the scheduler records.
const SchedulerActor = "scheduler"

// SchedulePass is what one pass did.
type SchedulePass struct {
	// Held reports whether this process held the lease (and so did the
	// pass).
	Held bool
	// Scheduled keys got a RotateAt; Started rotations published a next
	// key; Activated sites had a next key's activation persisted.
	Scheduled, Started, Activated int
}

// NewScheduler returns a Scheduler over m and its store.
func NewScheduler(m *Manager, o *SchedulerOptions) (*Scheduler, error) {
	rs, err := m.rotationStore()
	if err != nil {
		return nil, err
	}
	s := &Scheduler{m: m, store: rs}
	s.audit, _ = m.store.(storage.AuditStore)
	if o != nil {
		s.o = *o
	}
	if s.o.Holder == "" {
		host, _ := os.Hostname()
		s.o.Holder = fmt.Sprintf("%s/%d/%s", host, os.Getpid(), rand.Text()[:8])
	}
	s.o.PrePublish = orDefault(s.o.PrePublish, DefaultSchedulePrePublish)
	s.o.LeaseTTL = orDefault(s.o.LeaseTTL, DefaultLeaseTTL)
	s.o.Interval = orDefault(s.o.Interval, DefaultScheduleInterval)
	if s.o.Batch <= 0 {
		s.o.Batch = defaultScheduleBatch
	}
	s.log = s.o.Logger
	if s.log == nil {
		s.log = m.log
	}
	return s, nil
}

// Run makes a pass every Interval until ctx ends, then gives up the lease.
func (s *Scheduler) Run(ctx context.Context) {
	t := time.NewTicker(s.o.Interval)
	defer t.Stop()
	for {
		if _, err := s.RunOnce(ctx); err != nil && ctx.Err() == nil {
			s.log.WarnContext(ctx, "key rotation pass failed; retrying at the next", "err", err)
		}
		select {
		case <-ctx.Done():
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			_ = s.store.ReleaseLease(rctx, RotationLease, s.o.Holder)
			cancel()
			return
		case <-t.C:
		}
	}
}

// errLeaseLost stops a pass whose lease another replica took over (this
// one stalled past the TTL).
var errLeaseLost = errors.New("keys: rotation lease lost to another replica")

// RunOnce makes one pass if this process holds (or can take) the lease.
func (s *Scheduler) RunOnce(ctx context.Context) (SchedulePass, error) {
	var pass SchedulePass
	held, err := s.store.AcquireLease(ctx, RotationLease, s.o.Holder, time.Now(), s.o.LeaseTTL)
	if err != nil || !held {
		return pass, err
	}
	pass.Held = true
	renewed := time.Now()
	// keep renews the lease when a third of its TTL has passed, and stops
	// the pass if another replica holds it now.
	keep := func() error {
		if time.Since(renewed) < s.o.LeaseTTL/3 {
			return nil
		}
		ok, err := s.store.AcquireLease(ctx, RotationLease, s.o.Holder, time.Now(), s.o.LeaseTTL)
		if err != nil {
			return err
		}
		if !ok {
			return errLeaseLost
		}
		renewed = time.Now()
		return nil
	}

	// 1. Persist activations that are due: the next key signs, the old one
	// retires (Manager.load does both, idempotently).
	pending, err := s.store.PendingSiteKeys(ctx, time.Now(), s.o.Batch)
	if err != nil {
		return pass, err
	}
	seen := map[tenant.ID]bool{}
	for _, k := range pending {
		if seen[k.SiteID] {
			continue
		}
		seen[k.SiteID] = true
		if err := keep(); err != nil {
			return pass, err
		}
		s.m.Invalidate(k.SiteID)
		if _, err := s.m.ring(ctx, k.SiteID); err != nil {
			return pass, err
		}
		s.announce(ctx, k.SiteID)
		pass.Activated++
	}

	// 2. Schedule keys made before scheduling.
	unscheduled, err := s.store.UnscheduledSiteKeys(ctx, s.o.Batch)
	if err != nil {
		return pass, err
	}
	for _, k := range unscheduled {
		if err := keep(); err != nil {
			return pass, err
		}
		period, err := s.periodOf(ctx, k.SiteID)
		if err != nil {
			return pass, err
		}
		at := notBefore(k.SiteID, RotationDue(k.SiteID, k.ActivatesAt, period), time.Now(), period)
		if err := s.store.SetSiteKeyRotateAt(ctx, k.SiteID, k.KID, &at); err != nil && !errors.Is(err, storage.ErrNotFound) {
			return pass, err
		}
		pass.Scheduled++
	}

	// 3. Start the rotations that are due.
	due, err := s.store.DueSiteKeys(ctx, time.Now(), s.o.Batch)
	if err != nil {
		return pass, err
	}
	for _, k := range due {
		if err := keep(); err != nil {
			return pass, err
		}
		started, err := s.rotate(ctx, k)
		if err != nil {
			return pass, err
		}
		if started {
			pass.Started++
		}
	}
	if pass.Scheduled+pass.Started+pass.Activated > 0 {
		s.log.InfoContext(ctx, "key rotation pass", "scheduled", pass.Scheduled, "started", pass.Started, "activated", pass.Activated)
	}
	return pass, nil
}

// rotate publishes the next key of a due active key k, unless the site's
// period (a setting changed since k was scheduled) puts it later.
func (s *Scheduler) rotate(ctx context.Context, k storage.SiteKey) (bool, error) {
	period, err := s.periodOf(ctx, k.SiteID)
	if err != nil {
		return false, err
	}
	now := time.Now()
	if due := RotationDue(k.SiteID, k.ActivatesAt, period); due.After(now) {
		return false, s.store.SetSiteKeyRotateAt(ctx, k.SiteID, k.KID, &due)
	}
	activates := now.Add(s.o.PrePublish)
	next, err := s.m.newKey(k.SiteID, storage.KeyNext, now, activates)
	if err != nil {
		return false, err
	}
	at := RotationDue(k.SiteID, activates, period).UTC()
	next.RotateAt = &at
	started, err := s.store.StartRotation(ctx, k.SiteID, k.KID, now, next)
	if err != nil || !started {
		return false, err
	}
	s.m.Invalidate(k.SiteID)
	s.announce(ctx, k.SiteID)
	s.log.LogAttrs(ctx, slog.LevelInfo, "signing key rotation started", logSite(k.SiteID),
		slog.String("kid", next.KID), slog.String("replaces", k.KID), slog.Time("activates_at", activates))
	s.recordRotation(ctx, k.SiteID, next.KID, k.KID, activates)
	return true, nil
}

// recordRotation records a started rotation in the site's audit log, as
// `lectern keys rotate` records the operator's: the key published, the
// one it replaces and when it signs (the old key retires then). That
// instant is known here, once: the activation itself is persisted by
// whichever replica loads the ring first, possibly several at once. A
// failure is logged; the rotation has started.
func (s *Scheduler) recordRotation(ctx context.Context, site tenant.ID, kid, replaces string, activates time.Time) {
	if s.audit == nil {
		return
	}
	e := &storage.AuditEvent{SiteID: site, Actor: SchedulerActor, Action: "key.rotated", Target: kid, CreatedAt: time.Now(),
		Details: map[string]any{"replaces": replaces, "activates_at": activates.UTC().Format(time.RFC3339)}}
	if err := s.audit.RecordAudit(ctx, e); err != nil {
		s.log.LogAttrs(ctx, slog.LevelWarn, "audit event not recorded", logSite(site), slog.String("action", e.Action), slog.String("error", err.Error()))
	}
}

func (s *Scheduler) periodOf(ctx context.Context, site tenant.ID) (time.Duration, error) {
	if s.o.PeriodOf != nil {
		d, err := s.o.PeriodOf(ctx, site)
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			return 0, err
		}
		if d > 0 {
			return d, nil
		}
	}
	return s.m.period, nil
}

func (s *Scheduler) announce(ctx context.Context, site tenant.ID) {
	if s.o.Announce != nil {
		s.o.Announce(ctx, site)
	}
}
