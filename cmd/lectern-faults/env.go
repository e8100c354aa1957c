package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/lectern/lectern/authserver/scope"
	"github.com/lectern/lectern/internal/demo"
	"github.com/lectern/lectern/internal/oauthtest"
	"github.com/lectern/lectern/internal/redistest"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/storage/sqlstore"
)

// Ports: issue 15B's range, 33000-33999, inside Linux's ephemeral range
// (32768-60999), so any port may be the local end of some long-lived
// outgoing connection on the machine. Each server takes the first port
// free in its block when it is created (freePorts); only the front port,
// the demo's origin, stays the same for a whole run.
const (
	portPG        = 33010 // PostgreSQL: 33010-33049
	portRedis     = 33050 // a Redis server: 33050-33079
	portFront     = 33080 // the site's origin (nginx, or the single replica): 33080-33099
	portReplica0  = 33100 // replicas behind nginx: 33100-33199
	portSentinel0 = 33200 // a Sentinel group: 6 ports of 33200-33599
	portCluster0  = 33600 // a Cluster: 12 ports (6 nodes, 6 buses) of 33600-33999
)

// freePort is the first port free in [from, to).
func freePort(from, to int) (int, error) {
	p, err := freePorts(1, from, to)
	if err != nil {
		return 0, err
	}
	return p[0], nil
}

// benchClients are the public clients the load uses (the token endpoint
// limits each client; the driver raises the limits too, see lecternEnv).
const benchClients = 16

// run is one `make faults` run: the binary, the key-encryption key and the
// template database every scenario copies.
type run struct {
	front    int // the front port: the demo's origin
	bin      string
	nginxCfg string
	dir      string
	kek      string
	template string // stopped PostgreSQL data directory: migrated, seeded, with bench clients
	clients  []string
}

func (r *run) origin() string { return "http://localhost:" + strconv.Itoa(r.front) }

// env is one scenario's own PostgreSQL, Redis and Lectern processes.
type env struct {
	r        *run
	dir      string
	pg       *postgres
	redis    *redistest.Node
	sentinel *redistest.SentinelGroup
	cluster  *redistest.Cluster
	redisURL string
	replicas []*replica
	ngx      *nginx
	front    string // what the clients dial
	extraEnv []string
}

// lecternEnv is the environment of every lectern command of the scenario.
// The per-client and per-site token limits are raised: the scenarios test
// faults, not the limits (which have their own tests).
func (e *env) lecternEnv() []string {
	return append([]string{
		"DATABASE_URL=" + e.pg.url(),
		"REDIS_URL=" + e.redisURL,
		"LECTERN_KEK=" + e.r.kek,
		"LECTERN_DATA_DIR=" + filepath.Join(e.dir, "data"),
		"LECTERN_LOG_LEVEL=warn",
		"LECTERN_ACCESS_LOG=false",
		"LECTERN_DB_MAX_CONNS=16",
		"LECTERN_TRUSTED_PROXIES=127.0.0.1",
		"LECTERN_LIMIT_TOKEN_PER_CLIENT=100000",
		"LECTERN_LIMIT_TOKEN_PER_SITE=100000",
		"LECTERN_LIMIT_LOGIN_CHECKS_PER_SITE=50",
	}, e.extraEnv...)
}

// topology says which cache a scenario runs on and how many replicas.
type topology struct {
	redis      string // "single", "sentinel", "cluster"
	redisExtra []string
	replicas   int // 1: the replica listens on the front port; 3: behind nginx
	extraEnv   []string
}

// newEnv starts a scenario's processes: its copy of the template database,
// its Redis and its replicas (behind nginx when there are three).
func (r *run) newEnv(name string, t topology) (e *env, err error) {
	dir := filepath.Join(r.dir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	e = &env{r: r, dir: dir, extraEnv: t.extraEnv}
	defer func() {
		if err != nil {
			e.close()
		}
	}()
	pgPort, err := freePort(portPG, portRedis)
	if err != nil {
		return e, err
	}
	if e.pg, err = copyPostgres(r.template, filepath.Join(dir, "pg"), pgPort); err != nil {
		return e, err
	}
	if err = e.pg.start(); err != nil {
		return e, err
	}
	switch t.redis {
	case "sentinel":
		err = withFreePorts(6, portSentinel0, func(p []int) (err error) {
			e.sentinel, err = redistest.NewSentinel(p[:3], p[3:])
			return err
		})
		if err != nil {
			return e, err
		}
		e.redisURL = e.sentinel.URL
	case "cluster":
		err = withFreePorts(12, portCluster0, func(p []int) (err error) {
			e.cluster, err = redistest.NewCluster(p[:6], p[6:])
			return err
		})
		if err != nil {
			return e, err
		}
		e.redisURL = e.cluster.URL
	default:
		rdir := filepath.Join(dir, "redis")
		if err = os.MkdirAll(rdir, 0o755); err != nil {
			return e, err
		}
		extra := t.redisExtra
		if len(extra) == 0 {
			extra = []string{"--maxmemory-policy", "noeviction"}
		}
		var port int
		if port, err = freePort(portRedis, portFront); err != nil {
			return e, err
		}
		if e.redis, err = redistest.NewServer(port, rdir, extra...); err != nil {
			return e, err
		}
		e.redisURL = "redis://" + e.redis.Addr() + "/0"
	}
	if t.replicas <= 1 {
		rep := &replica{name: "lectern", bin: r.bin, port: r.front, env: e.lecternEnv(),
			logPath: filepath.Join(dir, "lectern.log")}
		e.replicas = []*replica{rep}
		e.front = rep.addr()
		return e, rep.start()
	}
	ports, err := freePorts(t.replicas, portReplica0, portSentinel0)
	if err != nil {
		return e, err
	}
	for i := range t.replicas {
		rep := &replica{name: "lectern-" + strconv.Itoa(i+1), bin: r.bin, port: ports[i],
			env: e.lecternEnv(), logPath: filepath.Join(dir, "lectern-"+strconv.Itoa(i+1)+".log")}
		e.replicas = append(e.replicas, rep)
		if err = rep.start(); err != nil {
			return e, err
		}
	}
	ndir := filepath.Join(dir, "nginx")
	if err = os.MkdirAll(ndir, 0o755); err != nil {
		return e, err
	}
	if e.ngx, err = startNginx(r.nginxCfg, ndir, r.front, ports); err != nil {
		return e, err
	}
	e.front = "127.0.0.1:" + strconv.Itoa(r.front)
	return e, nil
}

// withFreePorts starts a topology on n ports found free in [from,
// from+400), again with other ports when one was taken meanwhile.
func withFreePorts(n, from int, start func([]int) error) error {
	for attempt := 0; ; attempt++ {
		ports, err := freePorts(n, from, from+400)
		if err != nil {
			return err
		}
		err = start(ports)
		if err == nil || attempt == 3 || !strings.Contains(err.Error(), "in use") {
			return err
		}
	}
}

// close stops everything of the scenario, front first, by PID.
func (e *env) close() {
	if e.ngx != nil {
		_ = e.ngx.stop()
	}
	for _, rep := range e.replicas {
		if rep.p != nil {
			_ = rep.p.stop(syscall.SIGKILL, 5*time.Second)
		}
	}
	if e.redis != nil {
		_ = e.redis.Kill()
	}
	if e.sentinel != nil {
		e.sentinel.Stop()
	}
	if e.cluster != nil {
		e.cluster.Stop()
	}
	if e.pg != nil {
		_ = e.pg.stop()
	}
}

// newClient signs the student in (through the real form) on the front.
func (e *env) newClient() (*client, error) {
	c := newClient(e.r.origin(), e.front)
	_, _, out := c.authorize(e.r.clients[0])
	if out != outOK && out != outSignedInAgain {
		return nil, fmt.Errorf("signing in: %s", out)
	}
	return c, nil
}

// buildTemplate makes the database every scenario starts from: migrated,
// the demo seeded for the front port, bench clients created and consented
// to by the student (consent is remembered in the database).
func (r *run) buildTemplate(ctx context.Context) error {
	pgDir := filepath.Join(r.dir, "template", "pg")
	if err := os.MkdirAll(filepath.Dir(pgDir), 0o755); err != nil {
		return err
	}
	var err error
	if r.front, err = freePort(portFront, portReplica0); err != nil {
		return err
	}
	pgPort, err := freePort(portPG, portRedis)
	if err != nil {
		return err
	}
	pg, err := initPostgres(pgDir, pgPort)
	if err != nil {
		return err
	}
	if err := pg.start(); err != nil {
		return err
	}
	defer func() { _ = pg.stop() }()
	e := &env{r: r, dir: filepath.Dir(pgDir), pg: pg}
	rdir := filepath.Join(e.dir, "redis")
	if err := os.MkdirAll(rdir, 0o755); err != nil {
		return err
	}
	rport, err := freePort(portRedis, portFront)
	if err != nil {
		return err
	}
	if e.redis, err = redistest.NewServer(rport, rdir, "--maxmemory-policy", "noeviction"); err != nil {
		return err
	}
	defer func() { _ = e.redis.Kill() }()
	e.redisURL = "redis://" + e.redis.Addr() + "/0"
	if _, err := runCmd(e.lecternEnv(), r.bin, "migrate"); err != nil {
		return err
	}
	if _, err := runCmd(e.lecternEnv(), r.bin, "seed", "demo", "--port", strconv.Itoa(r.front)); err != nil {
		return err
	}
	if err := createClients(ctx, pg.url(), benchClients); err != nil {
		return err
	}
	for i := range benchClients {
		r.clients = append(r.clients, "faults-client-"+strconv.Itoa(i))
	}
	rep := &replica{name: "lectern-template", bin: r.bin, port: r.front, env: e.lecternEnv(),
		logPath: filepath.Join(e.dir, "lectern.log")}
	if err := rep.start(); err != nil {
		return err
	}
	defer func() { _ = rep.p.stop(syscall.SIGKILL, 5*time.Second) }()
	c := newClient(r.origin(), rep.addr())
	for _, id := range r.clients {
		o, err := c.browser.Authorize(c.oauth(id).AuthCodeURL("s", oauth2S256(), resourceParam(r.origin())),
			oauthtest.Options{Email: demo.StudentEmail, Password: demo.StudentPassword})
		if err != nil {
			return err
		}
		if _, err := o.Code(); err != nil {
			return fmt.Errorf("consent for %s: %w", id, err)
		}
	}
	if err := rep.sigterm(); err != nil {
		return err
	}
	r.template = pgDir
	return nil
}

// createClients adds public native clients of Demo Academy with the
// loopback redirect URI, through the store.
func createClients(ctx context.Context, dbURL string, n int) error {
	store, err := sqlstore.Open(ctx, dbURL, nil)
	if err != nil {
		return err
	}
	defer store.Close()
	site, err := store.SiteBySlug(ctx, demo.AcademySlug)
	if err != nil {
		return err
	}
	for i := range n {
		id := "faults-client-" + strconv.Itoa(i)
		c := &storage.Client{SiteID: &site.ID, ClientID: id, Name: "Faults " + strconv.Itoa(i), Audience: storage.AudienceMember,
			Type: storage.ClientPublic, ApplicationType: "native", RedirectURIs: []string{redirectURI}, Scopes: scope.MemberDefault(),
			Source: storage.SourceAdmin, Reviewed: true, CreatedBy: "lectern-faults"}
		if err := store.CreateClient(ctx, c); err != nil && !errors.Is(err, storage.ErrConflict) {
			return err
		}
	}
	return nil
}
