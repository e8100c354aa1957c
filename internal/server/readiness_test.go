package server

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/lectern/lectern/internal/redistest"
	"github.com/lectern/lectern/storage"
)

// Audit R: on a Redis Cluster readiness probed a write on the {platform}
// key's master only, so /readyz answered 200 while another master was
// full (maxmemory, noeviction) and every sign-in of the sites there
// answered 503. It now probes a write on every master.
func TestReadinessOnAClusterProbesEveryMaster(t *testing.T) {
	// This package's ports (redistest's list).
	c := redistest.StartCluster(t, []int{27061, 27062, 27063, 27064, 27065, 27066}, []int{27071, 27072, 27073, 27074, 27075, 27076})
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.DiscardHandler))
	const prefix = "lectern-test:readiness:"
	a, err := Open(context.Background(), &Config{DataDir: t.TempDir(), RedisURL: c.URL, RedisPrefix: prefix}, slog.New(slog.DiscardHandler), OpenOptions{Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	s, err := New(t.Context(), a)
	if err != nil {
		t.Fatal(err)
	}
	readyz := func() (int, Readiness) {
		time.Sleep(readyTTL + 100*time.Millisecond) // past the cached answer
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
		var r Readiness
		if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil {
			t.Fatalf("/readyz: %d %s", rec.Code, rec.Body)
		}
		return rec.Code, r
	}
	if code, r := readyz(); code != http.StatusOK || r.Cache["topology"] != "cluster" {
		t.Fatalf("/readyz on a healthy Cluster: %d %+v", code, r)
	}

	// Fill up a master that does not serve the {platform} key's slot: it
	// answers MOVED for that key.
	masters, err := c.Masters()
	if err != nil {
		t.Fatal(err)
	}
	platformKey := prefix + storage.PlatformKey("ready", "x")
	var full *redistest.Node
	for _, m := range masters {
		out, _ := m.CLI("GET", platformKey)
		if strings.HasPrefix(strings.TrimSpace(out), "MOVED") {
			full = m
			break
		}
	}
	if full == nil {
		t.Fatal("no master without the {platform} slot")
	}
	if _, err := full.CLI("CONFIG", "SET", "maxmemory", "1"); err != nil {
		t.Fatal(err)
	}
	code, r := readyz()
	if code != http.StatusServiceUnavailable || r.Checks["cache"] != "unavailable" || !strings.Contains(r.Reasons["cache"], "out of memory") {
		t.Errorf("/readyz with master %s full: %d %+v; want 503, the cache out of memory", full.Addr(), code, r)
	}
	if _, err := full.CLI("CONFIG", "SET", "maxmemory", "0"); err != nil {
		t.Fatal(err)
	}
	if code, r := readyz(); code != http.StatusOK {
		t.Errorf("/readyz once the master has room again: %d %+v", code, r)
	}
}
