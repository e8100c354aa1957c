package integration

import (
	"context"
	"fmt"
	"net/url"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/lectern/lectern/discovery"
	"github.com/lectern/lectern/internal/demo"
	"github.com/lectern/lectern/internal/redistest"
	"github.com/lectern/lectern/internal/server"
	"github.com/lectern/lectern/storage/sqlstore/sqltest"
	"github.com/lectern/lectern/storage/storagetest"
	"github.com/lectern/lectern/vocab"
)

// Ports of the integration tests' Redis topologies (issue 15's range;
// storage/cache uses others, so both packages may run at once).
var (
	itClusterPorts   = []int{27021, 27022, 27023, 27024, 27025, 27026}
	itClusterBus     = []int{27031, 27032, 27033, 27034, 27035, 27036}
	itSentinelRedis  = []int{27111, 27112, 27113}
	itSentinelSentry = []int{27211, 27212, 27213}
)

// The topologies start with the first test that needs one and stop after
// the package's tests (TestMain).
var topologies struct {
	clusterOnce, sentinelOnce sync.Once
	cluster                   *redistest.Cluster
	sentinel                  *redistest.SentinelGroup
	clusterErr, sentinelErr   error
}

func needTopologies(t *testing.T) {
	t.Helper()
	if err := redistest.Available(); err != nil {
		if storagetest.Required() {
			t.Fatalf("Redis topologies are required (LECTERN_REQUIRE_SERVICES=1): %v", err)
		}
		t.Skipf("%v; set LECTERN_REQUIRE_SERVICES=1 to fail instead of skipping", err)
	}
}

func clusterURL(t *testing.T) string {
	t.Helper()
	needTopologies(t)
	topologies.clusterOnce.Do(func() {
		topologies.cluster, topologies.clusterErr = redistest.NewCluster(itClusterPorts, itClusterBus)
	})
	if topologies.clusterErr != nil {
		t.Fatal(topologies.clusterErr)
	}
	return topologies.cluster.URL
}

func sentinelURL(t *testing.T) string {
	t.Helper()
	needTopologies(t)
	topologies.sentinelOnce.Do(func() {
		topologies.sentinel, topologies.sentinelErr = redistest.NewSentinel(itSentinelRedis, itSentinelSentry)
	})
	if topologies.sentinelErr != nil {
		t.Fatal(topologies.sentinelErr)
	}
	return topologies.sentinel.URL
}

// eachTopology runs f with PostgreSQL and a real Redis Cluster (3 masters,
// 3 replicas), and with a real Sentinel group (a master, 2 replicas, 3
// sentinels).
func eachTopology(t *testing.T, f func(t *testing.T, b backend)) {
	t.Run("postgres+cluster", func(t *testing.T) {
		f(t, backend{name: "postgres+cluster", databaseURL: sqltest.PostgresSchemaURL(t), redisURL: clusterURL(t)})
	})
	t.Run("postgres+sentinel", func(t *testing.T) {
		f(t, backend{name: "postgres+sentinel", databaseURL: sqltest.PostgresSchemaURL(t), redisURL: sentinelURL(t)})
	})
}

// The flows people use, on Redis Cluster and Sentinel: the code flow with
// x/oauth2 (and the id_token), userinfo, refresh rotation and its reuse
// detection, the member API, revocation, and a site change reaching a
// second replica through the change broadcast (sharded pub/sub on a
// Cluster).
func TestFlowsOnRedisTopologies(t *testing.T) {
	eachTopology(t, func(t *testing.T, b backend) {
		prefix := "lectern-test-" + randomHex(6) + ":"
		same := func(c *server.Config) { c.RedisPrefix = prefix; c.SiteCacheTTL = time.Hour }
		ts := startServer(t, b, &serverOptions{configure: same})
		if code, d := ts.readyz(t); code != 200 || d.Cache["topology"] != map[string]string{"postgres+cluster": "cluster", "postgres+sentinel": "sentinel"}[b.name] {
			t.Fatalf("/readyz: %d %+v", code, d)
		}
		origin := ts.academy()

		f := newFlow(t, ts, origin, demo.MemberClientID, "openid", "profile", "email", "account:read")
		tok, err := f.exchange(f.authorize(demo.StudentEmail, demo.StudentPassword))
		if err != nil {
			t.Fatalf("code exchange: %v", err)
		}
		if idt, _ := tok.Extra("id_token").(string); idt == "" {
			t.Fatal("no id_token")
		}
		if code, _, claims := f.userinfo(tok.AccessToken); code != 200 || claims["email"] != demo.StudentEmail {
			t.Fatalf("userinfo: %d %v", code, claims)
		}
		d := gqlQuery(t, ts, origin, tok.AccessToken, `{ viewer { enrolledCourses(first: 5) { totalCount } } }`, nil)
		if n, _ := gqlPath(d, "viewer", "enrolledCourses", "totalCount").(float64); n != 2 {
			t.Fatalf("member API: %v", d)
		}

		next, err := f.conf.TokenSource(f.ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
		if err != nil {
			t.Fatalf("refresh: %v", err)
		}
		if code, _, _ := f.userinfo(next.AccessToken); code != 200 {
			t.Fatalf("userinfo with the refreshed token: %d", code)
		}
		if _, err := f.conf.TokenSource(f.ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token(); oauthErrorCode(err) != "invalid_grant" {
			t.Fatalf("refresh token reuse: %v; want invalid_grant", err)
		}
		if code, _, _ := f.userinfo(next.AccessToken); code != 401 {
			t.Fatalf("access token of the grant revoked by reuse: %d; want 401", code)
		}

		other := ts.studentToken(t, origin)
		if code, _, body := ts.postForm(t, origin+vocab.RevocationPath, url.Values{"token": {other.AccessToken}, "client_id": {demo.MemberClientID}}); code != 200 {
			t.Fatalf("revocation: %d %v", code, body)
		}
		if code, _, _ := ts.bearerGet(t, origin+vocab.UserInfoPath, other.AccessToken); code != 401 {
			t.Fatalf("revoked token: %d; want 401", code)
		}
		if r := gqlPost(t, ts, origin, other.AccessToken, `{ viewer { enrolledCourses(first: 1) { totalCount } } }`, nil); r.status != 401 {
			t.Fatalf("member API with a revoked token: %d %s", r.status, r.raw)
		}

		// A second replica sees a site change through the broadcast, long
		// before its site-cache TTL (an hour).
		second := startServer(t, b, &serverOptions{configure: same, originPort: ts.port})
		var before discovery.ProtectedResourceMetadata
		second.getJSON(t, second.academy(), vocab.ProtectedResourcePath, 200, &before)
		ctx := context.Background()
		s, err := ts.app.Store.SiteBySlug(ctx, demo.AcademySlug)
		if err != nil {
			t.Fatal(err)
		}
		s.Name = "Renamed on " + b.name
		if err := ts.app.Platform.UpdateSite(ctx, s); err != nil {
			t.Fatal(err)
		}
		eventually(t, 5*time.Second, func() error {
			var after discovery.ProtectedResourceMetadata
			second.getJSON(t, second.academy(), vocab.ProtectedResourcePath, 200, &after)
			if after.ResourceName != s.Name {
				return fmt.Errorf("second replica still says %q", after.ResourceName)
			}
			return nil
		})
		// And the revocation made at the first replica holds at the second.
		if code, _, _ := second.bearerGet(t, second.academy()+vocab.UserInfoPath, other.AccessToken); code != 401 {
			t.Fatalf("revoked token at the second replica: %d; want 401", code)
		}
	})
}
