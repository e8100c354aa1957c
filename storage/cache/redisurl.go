package cache

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	neturl "net/url"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Topology is how a deployment runs Redis, as its URL says.
type Topology string

const (
	// Single is one Redis server (redis://, rediss://, unix://).
	Single Topology = "redis"
	// Sentinel is a master and its replicas watched by Redis Sentinel
	// (redis+sentinel://, rediss+sentinel://): the client asks the
	// sentinels for the current master and follows failovers.
	Sentinel Topology = "sentinel"
	// Cluster is a Redis Cluster (redis+cluster://, rediss+cluster://).
	Cluster Topology = "cluster"
)

// redisTarget is a parsed Redis URL: which topology, and the go-redis
// options that reach it.
type redisTarget struct {
	topology Topology
	simple   *redis.Options
	failover *redis.FailoverOptions
	cluster  *redis.ClusterOptions
}

// parseRedisURL reads the URL forms REDIS_URL accepts:
//
//	redis://[user:pass@]host:port/db  rediss://...  unix://...   one server (go-redis' ParseURL)
//	redis+sentinel://[user:pass@]h1:26379,h2:26379/<master>[/db][?sentinel_username=..&sentinel_password=..]
//	redis+cluster://[user:pass@]h1:7000,h2:7001[/0]
//
// and the rediss+ forms of the last two (TLS to every node and sentinel).
// The user and password are the data nodes'; sentinels that need their own
// credentials get them from sentinel_username/sentinel_password. Errors
// never quote the URL, which may hold a password.
func parseRedisURL(url string) (*redisTarget, error) {
	scheme, rest, ok := strings.Cut(url, "://")
	if !ok {
		return nil, errors.New("not a URL (want redis://, rediss://, unix://, redis+sentinel:// or redis+cluster://)")
	}
	base, topo, _ := strings.Cut(strings.ToLower(scheme), "+")
	switch {
	case topo == "" && (base == "redis" || base == "rediss" || base == "unix"):
		o, err := redis.ParseURL(url)
		if err != nil {
			// url.Parse quotes the whole URL in its error, password
			// included; keep only its reason.
			var ue *neturl.Error
			if errors.As(err, &ue) {
				err = ue.Err
			}
			return nil, err
		}
		return &redisTarget{topology: Single, simple: o}, nil
	case base != "redis" && base != "rediss":
		return nil, fmt.Errorf("unknown scheme %q", scheme)
	case topo != string(Sentinel) && topo != string(Cluster):
		return nil, fmt.Errorf("unknown scheme %q (want redis+sentinel or redis+cluster)", scheme)
	}

	authority, pathQuery := rest, ""
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		authority, pathQuery = rest[:i], rest[i:]
	}
	var user, pass string
	if i := strings.LastIndexByte(authority, '@'); i >= 0 {
		u, err := neturl.Parse("redis://" + authority[:i] + "@host/")
		if err != nil || u.User == nil {
			return nil, errors.New("malformed user information")
		}
		user = u.User.Username()
		pass, _ = u.User.Password()
		authority = authority[i+1:]
	}
	var addrs []string
	for _, h := range strings.Split(authority, ",") {
		host, port, err := net.SplitHostPort(h)
		if err != nil || host == "" {
			return nil, fmt.Errorf("address %q is not host:port", h)
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("address %q has no valid port", h)
		}
		addrs = append(addrs, net.JoinHostPort(host, port))
	}
	pq, err := neturl.Parse(pathQuery)
	if err != nil {
		return nil, errors.New("malformed path or query")
	}
	query := pq.Query()
	take := func(name string) string {
		v := query.Get(name)
		query.Del(name)
		return v
	}
	var tlsConfig *tls.Config
	if base == "rediss" {
		// No ServerName: each connection verifies the host it dials.
		tlsConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	segments := strings.FieldsFunc(pq.Path, func(r rune) bool { return r == '/' })
	t := &redisTarget{topology: Topology(topo)}
	clientName := take("client_name")
	switch t.topology {
	case Sentinel:
		if len(segments) == 0 || len(segments) > 2 {
			return nil, errors.New("a sentinel URL names the master after the addresses: redis+sentinel://h1:26379,h2:26379/<master>[/db]")
		}
		db := 0
		if len(segments) == 2 {
			if db, err = strconv.Atoi(segments[1]); err != nil || db < 0 {
				return nil, fmt.Errorf("invalid database number %q", segments[1])
			}
		}
		t.failover = &redis.FailoverOptions{
			MasterName: segments[0], SentinelAddrs: addrs,
			SentinelUsername: take("sentinel_username"), SentinelPassword: take("sentinel_password"),
			Username: user, Password: pass, DB: db, TLSConfig: tlsConfig, ClientName: clientName,
		}
	case Cluster:
		if len(segments) > 1 || (len(segments) == 1 && segments[0] != "0") {
			return nil, errors.New("a Redis Cluster has only database 0")
		}
		t.cluster = &redis.ClusterOptions{
			Addrs: addrs, Username: user, Password: pass, TLSConfig: tlsConfig, ClientName: clientName,
		}
	}
	if len(query) > 0 {
		names := make([]string, 0, len(query))
		for k := range query {
			names = append(names, k)
		}
		return nil, fmt.Errorf("unknown URL parameters %v", names)
	}
	return t, nil
}

// newClient builds the go-redis client of t with the settings every
// topology shares.
func (t *redisTarget) newClient(poolSize int) redis.UniversalClient {
	switch t.topology {
	case Sentinel:
		o := t.failover
		if poolSize > 0 {
			o.PoolSize = poolSize
		}
		// Without it go-redis ignores context deadlines on reads and
		// writes, and a caller's deadline would not bound a call to a
		// stalled server.
		o.ContextTimeoutEnabled = true
		return redis.NewFailoverClient(o)
	case Cluster:
		o := t.cluster
		if poolSize > 0 {
			o.PoolSize = poolSize
		}
		o.ContextTimeoutEnabled = true
		return redis.NewClusterClient(o)
	default:
		o := t.simple
		if poolSize > 0 {
			o.PoolSize = poolSize
		}
		o.ContextTimeoutEnabled = true
		return redis.NewClient(o)
	}
}
