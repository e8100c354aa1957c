package cache

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lectern/lectern/internal/redistest"
)

func TestParseRedisURL(t *testing.T) {
	type want struct {
		topology                   Topology
		addrs                      []string
		master                     string
		db                         int
		user, pass                 string
		sentinelUser, sentinelPass string
		tls                        bool
	}
	for _, tc := range []struct {
		name, url string
		want      want
	}{
		{"plain", "redis://127.0.0.1:6379/2", want{topology: Single, addrs: []string{"127.0.0.1:6379"}, db: 2}},
		{"plain TLS with password", "rediss://u:p%40ss@cache.example:6380/0", want{topology: Single, addrs: []string{"cache.example:6380"}, user: "u", pass: "p@ss", tls: true}},
		{"sentinel", "redis+sentinel://h1:26379,h2:26379,h3:26380/mymaster/3",
			want{topology: Sentinel, addrs: []string{"h1:26379", "h2:26379", "h3:26380"}, master: "mymaster", db: 3}},
		{"sentinel without db", "redis+sentinel://h1:26379/mymaster",
			want{topology: Sentinel, addrs: []string{"h1:26379"}, master: "mymaster"}},
		{"sentinel with passwords", "rediss+sentinel://app:secret@h1:26379,[::1]:26379/main/0?sentinel_password=s%26p&sentinel_username=sen",
			want{topology: Sentinel, addrs: []string{"h1:26379", "[::1]:26379"}, master: "main", user: "app", pass: "secret", sentinelUser: "sen", sentinelPass: "s&p", tls: true}},
		{"cluster", "redis+cluster://h1:7000,h2:7001", want{topology: Cluster, addrs: []string{"h1:7000", "h2:7001"}}},
		{"cluster TLS with db 0", "rediss+cluster://:pw@h1:7000/0", want{topology: Cluster, addrs: []string{"h1:7000"}, pass: "pw", tls: true}},
		{"scheme case", "Redis+Cluster://h1:7000", want{topology: Cluster, addrs: []string{"h1:7000"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tg, err := parseRedisURL(tc.url)
			if err != nil {
				t.Fatal(err)
			}
			var got want
			got.topology = tg.topology
			switch tg.topology {
			case Single:
				o := tg.simple
				got.addrs, got.db, got.user, got.pass, got.tls = []string{o.Addr}, o.DB, o.Username, o.Password, o.TLSConfig != nil
			case Sentinel:
				o := tg.failover
				got.addrs, got.master, got.db, got.user, got.pass, got.tls = o.SentinelAddrs, o.MasterName, o.DB, o.Username, o.Password, o.TLSConfig != nil
				got.sentinelUser, got.sentinelPass = o.SentinelUsername, o.SentinelPassword
			case Cluster:
				o := tg.cluster
				got.addrs, got.user, got.pass, got.tls = o.Addrs, o.Username, o.Password, o.TLSConfig != nil
			}
			if d := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); d != "" {
				t.Errorf("parse %s (-want +got):\n%s", tc.url, d)
			}
		})
	}
}

func TestParseRedisURLErrors(t *testing.T) {
	for _, tc := range []struct{ name, url, says string }{
		{"no scheme", "127.0.0.1:6379", "not a URL"},
		{"unknown scheme", "memcached://h:1", "unknown scheme"},
		{"unknown topology", "redis+ring://h:1", "unknown scheme"},
		{"sentinel without master", "redis+sentinel://s3cret-user:s3cret@h1:26379", "names the master"},
		{"sentinel bad db", "redis+sentinel://h1:26379/m/x", "database number"},
		{"sentinel extra path", "redis+sentinel://h1:26379/m/0/x", "names the master"},
		{"cluster with db", "redis+cluster://h1:7000/1", "only database 0"},
		{"address without port", "redis+cluster://h1,h2:7000", "not host:port"},
		{"bad port", "redis+cluster://h1:70000", "no valid port"},
		{"empty address", "redis+cluster://h1:7000,", "not host:port"},
		{"unknown parameter", "redis+cluster://:s3cret@h1:7000?pool=3", "unknown URL parameters"},
		{"plain, unparsable", "redis://user:s3cret@127.0.0.1:bad port/0", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseRedisURL(tc.url)
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tc.says) {
				t.Errorf("error %q does not say %q", err, tc.says)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("the error shows the password: %v", err)
			}
		})
	}
}

// An evicting maxmemory-policy is refused unless allowed, and the policy
// is reported.
func TestRedisEvictionPolicy(t *testing.T) {
	n := redistest.StartServer(t, 27301, "--maxmemory-policy", "allkeys-lru")
	url := "redis://" + n.Addr() + "/0"
	_, err := NewRedis(t.Context(), url, nil)
	if !errors.Is(err, ErrEvictingPolicy) || !strings.Contains(err.Error(), "allkeys-lru") {
		t.Fatalf("NewRedis with allkeys-lru: %v; want ErrEvictingPolicy naming it", err)
	}
	r, err := NewRedis(t.Context(), url, &RedisOptions{AllowEviction: true})
	if err != nil {
		t.Fatalf("NewRedis with eviction allowed: %v", err)
	}
	defer r.Close()
	if r.MaxmemoryPolicy() != "allkeys-lru" {
		t.Errorf("MaxmemoryPolicy = %q", r.MaxmemoryPolicy())
	}

	// A managed Redis that hides CONFIG: accepted, policy unknown.
	hidden := redistest.StartServer(t, 27302, "--rename-command", "CONFIG", "")
	r2, err := NewRedis(t.Context(), "redis://"+hidden.Addr()+"/0", nil)
	if err != nil {
		t.Fatalf("NewRedis where CONFIG is disabled: %v", err)
	}
	defer r2.Close()
	if r2.MaxmemoryPolicy() != "unknown" {
		t.Errorf("MaxmemoryPolicy where CONFIG is disabled = %q, want unknown", r2.MaxmemoryPolicy())
	}
	if err := r2.Set(t.Context(), "{s1}:k", []byte("v"), time.Minute); err != nil {
		t.Fatal(err)
	}
}
