package platform_test

import (
	"testing"
	"time"

	"github.com/lectern/lectern/internal/platform"
	"github.com/lectern/lectern/storage/sqlstore/sqltest"
)

// Audit R: the resubscription backoff grew with every interruption over
// the process' lifetime (1 s, 2 s, 4 s, … 30 s) and never came back, so
// after a few failovers each left a replica deaf to changes for 30 s; and
// after a gap only sites were dropped, while key rings and clients changed
// meanwhile stayed cached until their TTLs. Here, on a real Redis, each of
// three brief losses spread out in time is healed within about a second,
// and each drops the cached key rings and clients as well.
func TestWatchResubscribesPromptlyAfterEachGap(t *testing.T) {
	e := newEnv(t, sqltest.SQLite(t), newRedis(t))
	s := e.createSite(t, "gaps")
	c := &cuttableCache{Cache: e.cache}
	b := startReplicaOn(t, e, c)

	for gap := 1; gap <= 3; gap++ {
		// Healthy long enough between the losses.
		time.Sleep(platform.WatchHealthy + 200*time.Millisecond)
		old, err := b.p.Keys.SigningKey(t.Context(), s.ID) // cached for a minute
		if err != nil {
			t.Fatal(err)
		}

		c.down.Store(true)
		c.cut()
		start := time.Now()
		// Rotated on the other replica while this one is not listening:
		// the broadcast is missed.
		k, err := e.p.RotateKey(t.Context(), s.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
		if sk, err := b.p.Keys.SigningKey(t.Context(), s.ID); err != nil || sk.KID != old.KID {
			t.Fatalf("gap %d: during the gap the replica signs with %v, %v; want the cached %s (the test proves nothing)", gap, sk, err, old.KID)
		}
		c.down.Store(false)

		wantEvent(t, b.resolver.events, "all sites")
		if d := time.Since(start); d > 1800*time.Millisecond {
			t.Errorf("gap %d: resubscribed after %v; want about 1 s", gap, d.Round(10*time.Millisecond))
		}
		wantEvent(t, b.clients, "all clients")
		if sk, err := b.p.Keys.SigningKey(t.Context(), s.ID); err != nil || sk.KID != k.KID {
			t.Errorf("gap %d: after resubscribing the replica signs with %v, %v; want the key rotated during the gap, %s", gap, sk, err, k.KID)
		}
	}
}

// A longer outage: while the cache stays away the waits between tries
// grow, but to no more than 5 s, so the replica hears changes again within
// about 5 s of the cache's return (review of audit R's fix: after an 8 s
// outage the replica resubscribed 7 s after the cache was back).
func TestWatchResubscribesSoonAfterALongOutage(t *testing.T) {
	e := newEnv(t, sqltest.SQLite(t), newRedis(t))
	c := &cuttableCache{Cache: e.cache}
	b := startReplicaOn(t, e, c)

	c.down.Store(true)
	c.cut()
	// Tries at about 1, 3, 7 s fail; with waits growing to 30 s the next
	// would come at 15 s, with the 5 s bound at 12 s.
	time.Sleep(8500 * time.Millisecond)
	c.down.Store(false)
	back := time.Now()
	wantEvent(t, b.resolver.events, "all sites")
	if d := time.Since(back); d > 5500*time.Millisecond {
		t.Errorf("resubscribed %v after the cache came back; want within about 5 s", d.Round(100*time.Millisecond))
	}
}
