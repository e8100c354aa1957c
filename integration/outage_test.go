package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/lectern/lectern/discovery"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/storage/sqlstore/sqltest"
	"github.com/lectern/lectern/storage/storagetest"
	"github.com/lectern/lectern/vocab"
)

// PostgreSQL goes away: /readyz fails, requests that need the database get
// 503 JSON, and everything recovers by itself when it returns.
func TestDatabaseOutageAndRecovery(t *testing.T) {
	base := sqltest.PostgresSchemaURL(t)
	proxy := newFaultProxy(t, "127.0.0.1:5432")
	u, _ := url.Parse(base)
	u.Host = proxy.addr()
	ts := startServer(t, backend{name: "postgres-via-proxy", databaseURL: u.String()}, nil)
	ctx := context.Background()
	// A site the server has never resolved, so its lookup needs the database.
	extra := &storage.Site{Slug: "extra", Name: "Extra", Origin: "http://extra.test", RegistrationVariant: "B"}
	if err := ts.app.Platform.CreateSite(ctx, extra); err != nil {
		t.Fatal(err)
	}
	var ready map[string]any
	ts.getJSON(t, ts.academy(), "/readyz", 200, &ready)
	var prm discovery.ProtectedResourceMetadata
	ts.getJSON(t, ts.academy(), vocab.ProtectedResourcePath, 200, &prm) // resolved and cached

	proxy.cut()
	var e oauthError
	code, _, body := ts.get(t, "http://extra.test", vocab.ProtectedResourcePath)
	if code != 503 || json.Unmarshal(body, &e) != nil || e.Error != "temporarily_unavailable" {
		t.Fatalf("request during outage: %d %s; want 503 JSON", code, body)
	}
	// /readyz reuses its answer for a second, so probes stay cheap.
	eventually(t, 3*time.Second, func() error {
		if code, _, body := ts.get(t, ts.academy(), "/readyz"); code != 503 || !strings.Contains(string(body), `"database":"unavailable"`) {
			return fmt.Errorf("/readyz during outage: %d %s", code, body)
		}
		return nil
	})
	// A site already resolved keeps serving its metadata from memory.
	ts.getJSON(t, ts.academy(), vocab.ProtectedResourcePath, 200, &prm)

	proxy.restore()
	eventually(t, 10*time.Second, func() error {
		if code, _, _ := ts.get(t, ts.academy(), "/readyz"); code != 200 {
			return fmt.Errorf("/readyz %d", code)
		}
		if code, _, body := ts.get(t, "http://extra.test", vocab.ProtectedResourcePath); code != 200 {
			return fmt.Errorf("extra site %d %s", code, body)
		}
		return nil
	})
}

func TestRedisOutageAndRecovery(t *testing.T) {
	redisURL := storagetest.RedisURL(t)
	proxy := newFaultProxy(t, "127.0.0.1:6379")
	u, _ := url.Parse(redisURL)
	u.Host = proxy.addr()
	ts := startServer(t, backend{name: "redis-via-proxy", redisURL: u.String()}, nil)
	proxy.cut()
	eventually(t, 3*time.Second, func() error {
		if code, _, body := ts.get(t, ts.academy(), "/readyz"); code != 503 || !strings.Contains(string(body), `"cache":"unavailable"`) {
			return fmt.Errorf("/readyz with Redis down: %d %s", code, body)
		}
		return nil
	})
	proxy.restore()
	eventually(t, 10*time.Second, func() error {
		if code, _, body := ts.get(t, ts.academy(), "/readyz"); code != 200 {
			return fmt.Errorf("/readyz %d %s", code, body)
		}
		return nil
	})
}
