package keys_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/lectern/lectern/authserver/keys"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/storage/sqlstore"
	"github.com/lectern/lectern/storage/sqlstore/sqltest"
	"github.com/lectern/lectern/tenant"
)

// eachStoreInBubble runs f in a synctest bubble on a fresh SQLite database
// and a fresh PostgreSQL schema, each opened inside the bubble. The manager
// reads the time package's clock, which stands still until the test sleeps;
// the bubble's epoch is a whole second, so both databases store its
// instants exactly.
func eachStoreInBubble(t *testing.T, f func(t *testing.T, s *sqlstore.Store)) {
	for _, db := range []struct {
		name string
		open func(testing.TB) *sqlstore.Store
	}{{"sqlite", sqltest.SQLite}, {"postgres", sqltest.Postgres}} {
		t.Run(db.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { f(t, db.open(t)) })
		})
	}
}

var siteSeq atomic.Int64

// createSite inserts a site row (site_keys references sites).
func createSite(t testing.TB, s storage.SiteStore) tenant.ID {
	t.Helper()
	n := siteSeq.Add(1)
	site := &storage.Site{
		Slug:                fmt.Sprintf("keys-site-%d", n),
		Name:                fmt.Sprintf("Keys Site %d", n),
		Origin:              fmt.Sprintf("https://keys-site-%d.example.test", n),
		RegistrationVariant: tenant.VariantOpen,
	}
	if err := s.CreateSite(context.Background(), site); err != nil {
		t.Fatal(err)
	}
	return site.ID
}

func newManager(t testing.TB, store storage.KeyStore, kek []byte, opts *keys.Options) *keys.Manager {
	t.Helper()
	m, err := keys.NewManager(store, kek, opts)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// countingStore counts SiteKeys reads and can fail them or hold them, after
// reading, at a gate (a receive per read; close it to open for all).
type countingStore struct {
	storage.KeyStore
	reads atomic.Int64
	gate  chan struct{}
	fail  atomic.Pointer[error]
}

func (c *countingStore) SiteKeys(ctx context.Context, site tenant.ID, retiredAfter time.Time) ([]storage.SiteKey, error) {
	if err := c.fail.Load(); err != nil {
		c.reads.Add(1)
		return nil, *err
	}
	rows, err := c.KeyStore.SiteKeys(ctx, site, retiredAfter)
	c.reads.Add(1)
	if c.gate != nil {
		<-c.gate
	}
	return rows, err
}

// storedKey returns the stored row of kid (published or not yet expired).
func storedKey(t *testing.T, s storage.KeyStore, site tenant.ID, kid string) storage.SiteKey {
	t.Helper()
	rows, err := s.SiteKeys(context.Background(), site, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range rows {
		if k.KID == kid {
			return k
		}
	}
	t.Fatalf("site %d has no stored key %q", site, kid)
	return storage.SiteKey{}
}
