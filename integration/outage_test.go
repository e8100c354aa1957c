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
	"github.com/lectern/lectern/internal/demo"
	"github.com/lectern/lectern/internal/server"
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

// Issue 15: with Redis down the resource APIs stalled (each request waited
// for Redis before falling back to the database). Now the breaker notices
// the outage once, requests go straight to the database and to each
// replica's in-memory revocation copies, revocations during the outage
// hold, and the server returns to Redis when it is back.
func TestResourceAPIsThroughRedisOutage(t *testing.T) {
	proxy := newFaultProxy(t, "127.0.0.1:6379")
	u, _ := url.Parse(storagetest.RedisURL(t))
	u.Host = proxy.addr()
	ts := startServer(t, backend{name: "postgres+redis-via-proxy", databaseURL: sqltest.PostgresSchemaURL(t), redisURL: u.String()}, nil)
	origin := ts.academy()
	ops := startOps(t, ts)
	keep := ts.studentToken(t, origin)
	revoked := ts.studentToken(t, origin)
	const viewer = `{ viewer { enrolledCourses(first: 5) { totalCount } } }`

	proxy.cut()
	for i := range 20 {
		code, _, claims := ts.bearerGet(t, origin+vocab.UserInfoPath, keep.AccessToken)
		if code != 200 || claims["email"] != demo.StudentEmail || fmt.Sprint(claims["roles"]) != "[student]" {
			t.Fatalf("userinfo %d with Redis down: %d %v", i, code, claims)
		}
		if d := gqlQuery(t, ts, origin, keep.AccessToken, viewer, nil); gqlPath(d, "viewer", "enrolledCourses", "totalCount") == nil {
			t.Fatalf("member API with Redis down: %v", d)
		}
	}
	_, _, metrics := ops.get(t, "/metrics")
	if !strings.Contains(string(metrics), "lectern_redis_breaker_open 1") {
		t.Errorf("breaker metric with Redis down:\n%s", grepLines(string(metrics), "lectern_redis_breaker"))
	}
	// A revocation during the outage is decided by the database and holds.
	if code, _, body := ts.postForm(t, origin+vocab.RevocationPath, url.Values{"token": {revoked.AccessToken}, "client_id": {demo.MemberClientID}}); code != 200 {
		t.Fatalf("revocation with Redis down: %d %v", code, body)
	}
	if code, _, _ := ts.bearerGet(t, origin+vocab.UserInfoPath, revoked.AccessToken); code != 401 {
		t.Fatalf("revoked token with Redis down: %d; want 401", code)
	}

	proxy.restore()
	eventually(t, 10*time.Second, func() error {
		if code, _, body := ts.get(t, "http://10.1.2.3:8080", "/readyz"); code != 200 {
			return fmt.Errorf("/readyz after Redis returned: %d %s", code, body)
		}
		_, _, metrics := ops.get(t, "/metrics")
		if !strings.Contains(string(metrics), "lectern_redis_breaker_open 0") {
			return fmt.Errorf("breaker still open:\n%s", grepLines(string(metrics), "lectern_redis_breaker"))
		}
		return nil
	})
	if code, _, _ := ts.bearerGet(t, origin+vocab.UserInfoPath, revoked.AccessToken); code != 401 {
		t.Fatalf("token revoked during the outage, Redis back: %d; want 401", code)
	}
	if code, _, _ := ts.bearerGet(t, origin+vocab.UserInfoPath, keep.AccessToken); code != 200 {
		t.Fatalf("valid token, Redis back: %d", code)
	}
}

func grepLines(s, substr string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// Issue 15B: a revocation that cannot even check the token (a replica
// that has not loaded the site's keys yet, with PostgreSQL and Redis
// unreachable) answered 200 without revoking anything, so the client
// believed revoked a token that stayed valid after recovery. It must answer
// 503, and the retry after recovery revokes.
func TestRevocationUnavailableIsNotSuccess(t *testing.T) {
	dbURL, redisURL := sqltest.PostgresSchemaURL(t), storagetest.RedisURL(t)
	prefix := "lectern-test-" + randomHex(6) + ":"
	samePrefix := func(c *server.Config) { c.RedisPrefix = prefix }
	first := startServer(t, backend{name: "postgres+redis", databaseURL: dbURL, redisURL: redisURL}, &serverOptions{configure: samePrefix})
	pg := newFaultProxy(t, "127.0.0.1:5432")
	pu, _ := url.Parse(dbURL)
	pu.Host = pg.addr()
	rd := newFaultProxy(t, "127.0.0.1:6379")
	ru, _ := url.Parse(redisURL)
	ru.Host = rd.addr()
	second := startServer(t, backend{name: "postgres+redis-via-proxies", databaseURL: pu.String(), redisURL: ru.String()},
		&serverOptions{configure: samePrefix, originPort: first.port})
	origin := first.academy()
	tok := first.studentToken(t, origin)
	revoke := url.Values{"token": {tok.AccessToken}, "client_id": {demo.MemberClientID}}
	var prm discovery.ProtectedResourceMetadata
	second.getJSON(t, origin, vocab.ProtectedResourcePath, 200, &prm) // the site resolved, its keys not loaded
	// The client known to the second replica (revoking an unknown token
	// answers 200).
	if code, _, body := second.postForm(t, origin+vocab.RevocationPath, url.Values{"token": {"unknown"}, "client_id": {demo.MemberClientID}}); code != 200 {
		t.Fatalf("revoking an unknown token: %d %v", code, body)
	}

	pg.cut()
	rd.cut()
	if code, _, body := second.postForm(t, origin+vocab.RevocationPath, revoke); code != 503 || body["error"] != "temporarily_unavailable" {
		t.Fatalf("revocation with PostgreSQL and Redis unreachable: %d %v; want 503 temporarily_unavailable", code, body)
	}
	if code, _, _ := first.bearerGet(t, origin+vocab.UserInfoPath, tok.AccessToken); code != 200 {
		t.Fatalf("the token after a revocation answered 503: userinfo %d; want 200 (not revoked)", code)
	}
	pg.restore()
	rd.restore()
	eventually(t, 10*time.Second, func() error {
		if code, _, body := second.postForm(t, origin+vocab.RevocationPath, revoke); code != 200 {
			return fmt.Errorf("revocation after recovery: %d %v", code, body)
		}
		return nil
	})
	for _, ts := range []*testServer{first, second} {
		if code, _, _ := ts.bearerGet(t, origin+vocab.UserInfoPath, tok.AccessToken); code != 401 {
			t.Fatalf("token revoked by the retry: userinfo %d; want 401", code)
		}
	}
}
