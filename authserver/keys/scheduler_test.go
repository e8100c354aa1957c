package keys_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lectern/lectern/authserver/keys"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/storage/sqlstore"
	"github.com/lectern/lectern/tenant"
)

const testPeriod = 30 * 24 * time.Hour

func newScheduler(t *testing.T, m *keys.Manager, o *keys.SchedulerOptions) *keys.Scheduler {
	t.Helper()
	s, err := keys.NewScheduler(m, o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func runOnce(t *testing.T, s *keys.Scheduler) keys.SchedulePass {
	t.Helper()
	p, err := s.RunOnce(context.Background())
	if err != nil {
		t.Fatalf("RunOnce: %v", err)
	}
	return p
}

// The whole life of a scheduled rotation, on a fake clock (the synctest
// bubble's): the next key is published 24 h before it signs, signs from
// then on, and the old key stays in the JWKS until every token it signed
// has expired, then leaves it.
func TestSchedulerPublishesAheadActivatesAndRetires(t *testing.T) {
	eachStoreInBubble(t, func(t *testing.T, store *sqlstore.Store) {
		ctx := context.Background()
		m := newManager(t, store, newKEK(t), &keys.Options{RotationPeriod: testPeriod})
		site := createSite(t, store)
		old, err := m.CreateRing(ctx, site)
		if err != nil {
			t.Fatal(err)
		}
		if old.RotateAt == nil {
			t.Fatal("a new ring's key has no RotateAt")
		}
		if d := old.RotateAt.Sub(old.ActivatesAt); d < testPeriod*9/10 || d > testPeriod*11/10 {
			t.Fatalf("key due %s after activation; want the period ±10%% (%s)", d, testPeriod)
		}
		s := newScheduler(t, m, &keys.SchedulerOptions{PrePublish: 24 * time.Hour, Holder: "replica-a"})

		if p := runOnce(t, s); !p.Held || p.Started != 0 {
			t.Fatalf("pass before due: %+v; want the lease and nothing started", p)
		}
		time.Sleep(time.Until(*old.RotateAt) + time.Second)
		if p := runOnce(t, s); p.Started != 1 {
			t.Fatalf("pass when due: %+v; want one rotation started", p)
		}
		if p := runOnce(t, s); p.Started != 0 {
			t.Fatalf("second pass: %+v; a started rotation must not start again", p)
		}
		kids := jwksKIDs(t, m, site)
		if len(kids) != 2 || kids[0] != old.KID {
			t.Fatalf("JWKS after the rotation started: %v; want the active key first and the next one", kids)
		}
		next := kids[1]

		// Published ahead of use: 23 h later the old key still signs.
		time.Sleep(23 * time.Hour)
		if got := signingKID(t, m, site); got != old.KID {
			t.Fatalf("23 h into pre-publication the signer is %s; want the old %s", got, old.KID)
		}
		// Activation.
		time.Sleep(time.Hour + time.Second)
		if p := runOnce(t, s); p.Activated != 1 {
			t.Fatalf("pass after activation: %+v; want one activation persisted", p)
		}
		if got := signingKID(t, m, site); got != next {
			t.Fatalf("after 24 h the signer is %s; want the next key %s", got, next)
		}
		if k := storedKey(t, store, site, old.KID); k.State != storage.KeyRetired {
			t.Errorf("old key stored as %q after activation; want retired", k.State)
		}
		nk := storedKey(t, store, site, next)
		if nk.State != storage.KeyActive || nk.RotateAt == nil || nk.RotateAt.Before(nk.ActivatesAt.Add(testPeriod*9/10)) {
			t.Errorf("new key: state %q, rotate_at %v; want active and due about a period after %v", nk.State, nk.RotateAt, nk.ActivatesAt)
		}
		// Retirement: published while its tokens live (1 h + skew), then gone.
		if diff := cmp.Diff([]string{next, old.KID}, jwksKIDs(t, m, site)); diff != "" {
			t.Errorf("JWKS right after activation (-want +got):\n%s", diff)
		}
		time.Sleep(keys.DefaultRetain - time.Minute)
		if kids := jwksKIDs(t, m, site); len(kids) != 2 {
			t.Errorf("JWKS %v before the retired key's tokens expired; want it still published", kids)
		}
		time.Sleep(2 * time.Minute)
		if diff := cmp.Diff([]string{next}, jwksKIDs(t, m, site)); diff != "" {
			t.Errorf("JWKS after retention (-want +got):\n%s", diff)
		}
	})
}

// A site's own period (a site setting, through PeriodOf and Reschedule)
// replaces the platform's.
func TestSchedulerHonoursSitePeriod(t *testing.T) {
	eachStoreInBubble(t, func(t *testing.T, store *sqlstore.Store) {
		ctx := context.Background()
		m := newManager(t, store, newKEK(t), &keys.Options{RotationPeriod: testPeriod})
		weekly, monthly := createSite(t, store), createSite(t, store)
		for _, site := range []tenant.ID{weekly, monthly} {
			if _, err := m.CreateRing(ctx, site); err != nil {
				t.Fatal(err)
			}
		}
		week := 7 * 24 * time.Hour
		if err := m.Reschedule(ctx, weekly, week); err != nil {
			t.Fatal(err)
		}
		s := newScheduler(t, m, &keys.SchedulerOptions{PeriodOf: func(_ context.Context, site tenant.ID) (time.Duration, error) {
			if site == weekly {
				return week, nil
			}
			return 0, nil
		}})
		time.Sleep(week * 11 / 10)
		if p := runOnce(t, s); p.Started != 1 {
			t.Fatalf("after 7.7 days: %+v; want the weekly site alone rotated", p)
		}
		if st, _ := m.Status(ctx, monthly); st.Pending != "" {
			t.Errorf("the monthly site rotated after a week: %+v", st)
		}
		if st, _ := m.Status(ctx, weekly); st.Pending == "" {
			t.Errorf("the weekly site has no pending key: %+v", st)
		}
	})
}

// Sites created together rotate over a fifth of the period, not at once.
func TestRotationDueIsSpreadBySite(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	lo, hi := t0.Add(testPeriod*9/10), t0.Add(testPeriod*11/10)
	var first, last time.Time
	days := map[int]int{}
	for id := tenant.ID(1); id <= 10000; id++ {
		due := keys.RotationDue(id, t0, testPeriod)
		if due.Before(lo) || due.After(hi) {
			t.Fatalf("site %d due %v; want within ±10%% of %v", id, due, t0.Add(testPeriod))
		}
		if again := keys.RotationDue(id, t0, testPeriod); !again.Equal(due) {
			t.Fatalf("site %d: due time not fixed by the site id", id)
		}
		if first.IsZero() || due.Before(first) {
			first = due
		}
		if due.After(last) {
			last = due
		}
		days[int(due.Sub(lo)/(24*time.Hour))]++
	}
	if last.Sub(first) < testPeriod/6 {
		t.Errorf("10,000 sites due within %s; want them spread over about %s", last.Sub(first), testPeriod/5)
	}
	for d, n := range days {
		if n > 10000/4 {
			t.Errorf("%d of 10,000 sites due on day %d", n, d)
		}
	}
}

// dyingStore is a replica that dies during its pass: after `after`
// rotations, the next one is cut off mid-transaction and every later call
// fails, as for a process that is gone (its lease stays until it expires).
type dyingStore struct {
	storage.RotationStore
	after   int32
	started atomic.Int32
	dead    atomic.Bool
}

var errDead = errors.New("replica died")

func (d *dyingStore) StartRotation(ctx context.Context, site tenant.ID, kid string, now time.Time, next *storage.SiteKey) (bool, error) {
	if d.dead.Load() {
		return false, errDead
	}
	if d.started.Add(1) > d.after {
		d.dead.Store(true)
		cut, cancel := context.WithCancel(ctx)
		cancel()
		_, _ = d.RotationStore.StartRotation(cut, site, kid, now, next)
		return false, errDead
	}
	return d.RotationStore.StartRotation(ctx, site, kid, now, next)
}

func (d *dyingStore) AcquireLease(ctx context.Context, name, holder string, now time.Time, ttl time.Duration) (bool, error) {
	if d.dead.Load() {
		return false, errDead
	}
	return d.RotationStore.AcquireLease(ctx, name, holder, now, ttl)
}

func nextKeys(t *testing.T, store storage.KeyStore, site tenant.ID) int {
	t.Helper()
	rows, err := store.SiteKeys(context.Background(), site, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, k := range rows {
		if k.State == storage.KeyNext {
			n++
		}
	}
	return n
}

// Two replicas' schedulers on one database: one works at a time, and when
// it dies mid-pass the other finishes after the lease expires; every due
// site is rotated exactly once.
func TestSchedulerLeaseAcrossReplicas(t *testing.T) {
	eachStoreInBubble(t, func(t *testing.T, store *sqlstore.Store) {
		ctx := context.Background()
		kek := newKEK(t)
		opts := &keys.Options{RotationPeriod: testPeriod}
		setup := newManager(t, store, kek, opts)
		var sites []tenant.ID
		for range 12 {
			site := createSite(t, store)
			if _, err := setup.CreateRing(ctx, site); err != nil {
				t.Fatal(err)
			}
			sites = append(sites, site)
		}
		time.Sleep(testPeriod * 11 / 10)

		// Both replicas at once: exactly one holds the lease and rotates.
		dying := &dyingStore{RotationStore: store, after: 5}
		a := newScheduler(t, newManager(t, dying, kek, opts), &keys.SchedulerOptions{Holder: "replica-a", LeaseTTL: time.Minute})
		b := newScheduler(t, newManager(t, store, kek, opts), &keys.SchedulerOptions{Holder: "replica-b", LeaseTTL: time.Minute})
		var (
			wg           sync.WaitGroup
			passA, passB keys.SchedulePass
			errA, errB   error
		)
		// A takes the lease first; B tries while A works.
		if held, err := store.AcquireLease(ctx, keys.RotationLease, "replica-a", time.Now(), time.Minute); err != nil || !held {
			t.Fatalf("replica-a could not take a free lease: %v %v", held, err)
		}
		wg.Go(func() { passA, errA = a.RunOnce(ctx) })
		wg.Go(func() { passB, errB = b.RunOnce(ctx) })
		wg.Wait()
		if passB.Held || errB != nil {
			t.Fatalf("replica-b worked while replica-a held the lease: %+v %v", passB, errB)
		}
		if !errors.Is(errA, errDead) || passA.Started != 5 {
			t.Fatalf("replica-a: %+v %v; want 5 rotations, then death", passA, errA)
		}

		// The dead replica's lease holds until it expires.
		if p := runOnce(t, b); p.Held {
			t.Fatalf("replica-b took the lease of a replica dead for less than its TTL: %+v", p)
		}
		time.Sleep(time.Minute + time.Second)
		if p := runOnce(t, b); !p.Held || p.Started != 7 {
			t.Fatalf("replica-b after the lease expired: %+v; want the 7 remaining rotations", p)
		}
		for _, site := range sites {
			if n := nextKeys(t, store, site); n != 1 {
				t.Errorf("site %d has %d next keys; want exactly 1", site, n)
			}
		}
		if p := runOnce(t, b); p.Started != 0 {
			t.Errorf("a further pass started %d rotations; want none", p.Started)
		}
	})
}

// `lectern kek rotate`: with the new KEK current and the old one previous,
// every key is re-sealed under the new one, idempotently, and afterwards
// the old KEK is no longer needed.
func TestResealUnderNewKEK(t *testing.T) {
	eachStoreInBubble(t, func(t *testing.T, store *sqlstore.Store) {
		ctx := context.Background()
		oldKEK, newKEK := newKEK(t), newKEK(t)
		before := newManager(t, store, oldKEK, nil)
		var sites []tenant.ID
		for range 3 {
			site := createSite(t, store)
			if _, err := before.CreateRing(ctx, site); err != nil {
				t.Fatal(err)
			}
			sites = append(sites, site)
		}
		during := newManager(t, store, newKEK, &keys.Options{PreviousKEKs: [][]byte{oldKEK}})
		for _, site := range sites {
			signingKID(t, during, site) // opens under the previous KEK
		}
		rep, err := during.Reseal(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Resealed != 3 || rep.Current != 0 || rep.Unopenable != 0 {
			t.Fatalf("first pass: %+v; want 3 re-sealed", rep)
		}
		if rep, err = during.Reseal(ctx); err != nil || rep.Resealed != 0 || rep.Current != 3 {
			t.Fatalf("second pass: %+v %v; want nothing to do", rep, err)
		}
		after := newManager(t, store, newKEK, nil)
		stale := newManager(t, store, oldKEK, nil)
		for _, site := range sites {
			signingKID(t, after, site)
			var corrupt *keys.CorruptKeyError
			if _, err := stale.SigningKey(ctx, site); !errors.As(err, &corrupt) {
				t.Errorf("site %d still opens under the old KEK alone: %v", site, err)
			}
			if st, _ := after.Status(ctx, site); st.KEKID != rep.KEKID {
				t.Errorf("site %d sealed under %q; want %q", site, st.KEKID, rep.KEKID)
			}
		}
	})
}
