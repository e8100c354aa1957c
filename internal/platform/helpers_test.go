package platform_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/lectern/lectern/authserver/keys"
	"github.com/lectern/lectern/authserver/password"
	"github.com/lectern/lectern/internal/platform"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/storage/cache"
	"github.com/lectern/lectern/storage/sqlstore"
	"github.com/lectern/lectern/storage/sqlstore/sqltest"
	"github.com/lectern/lectern/storage/storagetest"
	"github.com/lectern/lectern/tenant"
)

// testParams keep argon2id cheap: the tests are about what the platform
// stores, not about the cost of a hash.
var testParams = password.Params{Memory: 1024, Time: 1, Threads: 1, KeyLen: 32, SaltLen: 16}

// env is a Platform over a real store and cache.
type env struct {
	p     *platform.Platform
	store *sqlstore.Store
	cache storage.Cache
	kek   []byte
}

func newEnv(t *testing.T, store *sqlstore.Store, c storage.Cache) *env {
	t.Helper()
	kek := make([]byte, keys.KEKSize)
	_, _ = rand.Read(kek)
	km, err := keys.NewManager(store, kek, nil)
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(t.Output(), nil))
	return &env{
		p:     &platform.Platform{Store: store, Keys: km, Cache: c, Logger: logger, PasswordParams: testParams},
		store: store,
		cache: c,
		kek:   kek,
	}
}

func newMemory(t *testing.T) storage.Cache {
	m := cache.NewMemory(nil)
	t.Cleanup(func() { _ = m.Close() })
	return m
}

// newRedis returns a Redis cache under a prefix of the test's own, so that
// channels and keys of parallel tests never meet (never FLUSHDB: the Redis
// is shared). What the platform writes (cached roles) expires within a
// minute.
func newRedis(t *testing.T) storage.Cache {
	t.Helper()
	r, err := cache.NewRedis(context.Background(), storagetest.RedisURL(t), &cache.RedisOptions{Prefix: "lectern-test:platform:" + rand.Text() + ":"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

// eachBackend runs f on every store (SQLite, PostgreSQL) and cache (memory,
// Redis) pairing, each on a fresh database.
func eachBackend(t *testing.T, f func(t *testing.T, e *env)) {
	for _, db := range []struct {
		name string
		open func(testing.TB) *sqlstore.Store
	}{{"sqlite", sqltest.SQLite}, {"postgres", sqltest.Postgres}} {
		t.Run(db.name, func(t *testing.T) {
			t.Run("memory", func(t *testing.T) { f(t, newEnv(t, db.open(t), newMemory(t))) })
			t.Run("redis", func(t *testing.T) { f(t, newEnv(t, db.open(t), newRedis(t))) })
		})
	}
}

var seq struct {
	sync.Mutex
	n int
}

// newSite returns a valid site no other test uses.
func newSite(label string) *storage.Site {
	seq.Lock()
	seq.n++
	n := seq.n
	seq.Unlock()
	slug := fmt.Sprintf("%s-%d", label, n)
	return &storage.Site{Slug: slug, Name: "Site " + slug, Origin: "https://" + slug + ".example.test", RegistrationVariant: tenant.VariantOpen}
}

func (e *env) createSite(t *testing.T, label string) *storage.Site {
	t.Helper()
	s := newSite(label)
	if err := e.p.CreateSite(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	return s
}

func (e *env) createUser(t *testing.T, email string) *storage.User {
	t.Helper()
	u, err := e.p.CreateUser(t.Context(), email, "Test Person", "", "correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// subscribe listens on channel for the rest of the test.
func (e *env) subscribe(t *testing.T, channel string) <-chan []byte {
	t.Helper()
	ch, err := e.cache.Subscribe(t.Context(), channel)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// next returns the next message on ch, failing after a few seconds: a
// broadcast that never comes is what replicas would miss.
func next(t *testing.T, ch <-chan []byte, what string) string {
	t.Helper()
	select {
	case m, ok := <-ch:
		if !ok {
			t.Fatalf("%s: the subscription closed", what)
		}
		return string(m)
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: no broadcast within 5 s", what)
	}
	return ""
}

// wantNothingAnnounced checks that nothing waits on the sites channel ch:
// broadcasts on one channel arrive in order, so the next one must be that
// of a marker site created now. what names what must not have been
// announced.
func (e *env) wantNothingAnnounced(t *testing.T, ch <-chan []byte, what string) {
	t.Helper()
	marker := e.createSite(t, "marker")
	if got := next(t, ch, "marker site"); got != siteMessage(marker.ID) {
		t.Errorf("broadcast %q before the marker %q: %s was announced", got, siteMessage(marker.ID), what)
	}
}

func siteMessage(id tenant.ID) string { return strconv.FormatInt(int64(id), 10) }

func wantErrIs(t *testing.T, err, target error, what string) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: err = %v, want %v", what, err, target)
	}
}
