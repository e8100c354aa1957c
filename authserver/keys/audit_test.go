package keys_test

import (
	"context"
	"testing"
	"time"

	"github.com/lectern/lectern/authserver/keys"
	"github.com/lectern/lectern/storage/sqlstore"
)

// A rotation the scheduler starts is in the site's audit log, once: the
// key published, the key it replaces and when it signs, by the actor
// "scheduler".
func TestSchedulerRecordsRotationsInTheAuditLog(t *testing.T) {
	eachStoreInBubble(t, func(t *testing.T, store *sqlstore.Store) {
		ctx := context.Background()
		m := newManager(t, store, newKEK(t), &keys.Options{RotationPeriod: testPeriod})
		site := createSite(t, store)
		old, err := m.CreateRing(ctx, site)
		if err != nil {
			t.Fatal(err)
		}
		s := newScheduler(t, m, &keys.SchedulerOptions{PrePublish: 24 * time.Hour, Holder: "replica-a"})
		time.Sleep(time.Until(*old.RotateAt) + time.Second)
		if p := runOnce(t, s); p.Started != 1 {
			t.Fatalf("pass when due: %+v; want one rotation started", p)
		}
		runOnce(t, s) // nothing new to start
		st, err := m.Status(ctx, site)
		if err != nil || st.Pending == "" {
			t.Fatalf("status after the rotation started: %+v, %v", st, err)
		}
		events, err := store.ListAudit(ctx, site, 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(events) != 1 {
			t.Fatalf("%d audit events after a rotation: %+v; want one", len(events), events)
		}
		e := events[0]
		want := st.PendingActivates.UTC().Format(time.RFC3339)
		if e.Action != "key.rotated" || e.Actor != keys.SchedulerActor || e.Target != st.Pending ||
			e.Details["replaces"] != old.KID || e.Details["activates_at"] != want {
			t.Fatalf("audit event %+v; want key.rotated by %q of %s replacing %s, activating at %s", e, keys.SchedulerActor, st.Pending, old.KID, want)
		}
	})
}
