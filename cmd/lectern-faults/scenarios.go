package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/lectern/lectern/internal/redistest"
)

// scenario is one row of the table.
type scenario struct {
	name  string
	fault string
	short bool // in make faults-short (CI)
	topo  topology
	spec  loadSpec
	// strict: zero failed requests (no fault the clients may notice);
	// cacheLoss: the fault loses cache contents.
	strict, cacheLoss bool
	// inject runs the fault under load and returns when the system is
	// meant to recover by itself (the fault healed, or for a failover the
	// kill), with a note for the table.
	inject func(ctx context.Context, e *env, l *load) (healed time.Time, note string, err error)
	// custom replaces the load-and-fault run (the races).
	custom func(ctx context.Context, e *env, res *result) error
}

// result is a row of the table.
type result struct {
	name, load, fault string
	outcomes          string
	total, ok         int
	held              bool
	violations        []string
	recovery          string
	note              string
	err               error
	took              time.Duration
}

// recoveryBound is how soon after a fault ends every operation must
// succeed again; failoverGrace is what a failover may take beyond the
// promotion (the clients' connections move to the new master).
const (
	recoveryBound = 10 * time.Second
	failoverGrace = 5 * time.Second
)

var defaultLoad = loadSpec{flow: 2, refresh: 3, userinfo: 3, revoke: 1, replay: 1, perWorker: 25}

func scenarios() []*scenario {
	single := topology{redis: "single", replicas: 1}
	return []*scenario{
		{name: "redis-sigkill", fault: "SIGKILL the Redis server, start it again empty after 3 s", short: true,
			topo: single, spec: defaultLoad, cacheLoss: true, inject: redisSigkill},
		{name: "postgres-restart", fault: "PostgreSQL fast shutdown and immediate start", short: true,
			topo: single, spec: defaultLoad, inject: pgRestart(0)},
		{name: "postgres-stop-5s", fault: "PostgreSQL stopped for 5 s",
			topo: single, spec: defaultLoad, inject: pgRestart(5 * time.Second)},
		{name: "postgres-stall", fault: "SIGSTOP every PostgreSQL process for 5 s, then SIGCONT",
			topo: single, spec: defaultLoad, inject: pgStall},
		{name: "sigterm", fault: "SIGTERM the only replica under load, start it again",
			topo: single, spec: defaultLoad, inject: sigtermRestart},
		{name: "code-race", fault: "100 codes, each redeemed by 20 concurrent requests", short: true,
			topo: single, custom: codeRace},
		{name: "refresh-race", fault: "100 refresh tokens, each used by 10 concurrent requests",
			topo: single, custom: refreshRace},
		{name: "key-rotation", fault: "3 signing-key rotations (activate at once), 2 s apart", strict: true,
			topo: single, spec: defaultLoad, inject: keyRotation},
		{name: "flushall", fault: "FLUSHALL on the Redis server", cacheLoss: true,
			topo: single, spec: defaultLoad, inject: flushAll},
		{name: "eviction", fault: "allkeys-lru, maxmemory 4 MB (LECTERN_REDIS_ALLOW_EVICTION=1), 30 MB of filler written",
			cacheLoss: true, topo: topology{redis: "single", replicas: 1,
				redisExtra: []string{"--maxmemory", "4mb", "--maxmemory-policy", "allkeys-lru"},
				extraEnv:   []string{"LECTERN_REDIS_ALLOW_EVICTION=1"}},
			spec: defaultLoad, inject: eviction},
		{name: "redis-oom", fault: "Redis at maxmemory (noeviction) for 5 s: every write refused",
			topo: single, spec: defaultLoad, inject: redisOOM},
		{name: "sentinel-failover", fault: "SIGKILL the Sentinel group's master under refresh + revoke load",
			cacheLoss: true, topo: topology{redis: "sentinel", replicas: 1},
			spec: loadSpec{flow: 1, refresh: 4, userinfo: 2, revoke: 2, replay: 1, perWorker: 25}, inject: sentinelFailover},
		{name: "sentinel-failover-lossy", fault: "the master drops its replicas' links, takes writes for 0.3 s, and is killed (SIGKILL): the promoted replica lacks its last writes",
			cacheLoss: true, topo: topology{redis: "sentinel", replicas: 1},
			spec: loadSpec{flow: 1, refresh: 4, userinfo: 2, revoke: 2, replay: 1, perWorker: 25}, inject: sentinelLossyFailover},
		{name: "cluster-node-loss", fault: "SIGKILL one of the Redis Cluster's three masters",
			cacheLoss: true, topo: topology{redis: "cluster", replicas: 1}, spec: defaultLoad, inject: clusterNodeLoss},
		{name: "rolling-restart", fault: "3 replicas behind nginx, each in turn: SIGTERM, wait for exit, start, wait for /readyz",
			short: true, strict: true, topo: topology{redis: "single", replicas: 3}, spec: defaultLoad, inject: rollingRestart},
	}
}

// runScenario runs s in its own environment and fills a row.
func (r *run) runScenario(ctx context.Context, s *scenario) (res *result) {
	start := time.Now()
	res = &result{name: s.name, fault: s.fault, load: s.spec.String()}
	defer func() { res.took = time.Since(start) }()
	e, err := r.newEnv(s.name, s.topo)
	if e != nil {
		defer e.close()
	}
	if err != nil {
		res.err = err
		return res
	}
	if s.custom != nil {
		res.load = "none besides the race"
		if err := s.custom(ctx, e, res); err != nil {
			res.err = err
		}
		res.held = res.err == nil && len(res.violations) == 0
		return res
	}
	c, err := e.newClient()
	if err != nil {
		res.err = err
		return res
	}
	l := &load{c: c, clients: r.clients, t: newTally(), strict: s.strict, cacheLoss: s.cacheLoss}
	lctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { l.run(lctx, s.spec); close(done) }()
	defer func() { stop(); <-done }()
	time.Sleep(3 * time.Second)
	if _, ok := l.t.totals(); ok == 0 {
		res.err = fmt.Errorf("no successful request before the fault: %s", l.t.summary())
		return res
	}
	healed, note, err := s.inject(ctx, e, l)
	res.note = note
	if err != nil {
		res.err = err
		return res
	}
	// Run on until 3 s pass without a failed request (at most 30 s).
	deadline := time.Now().Add(30 * time.Second)
	time.Sleep(3 * time.Second)
	for time.Now().Before(deadline) {
		if rec := l.t.recovery(healed); rec >= 0 && time.Since(healed.Add(rec)) >= 3*time.Second {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	l.t.freeze(true)
	stop()
	<-done
	l.t.freeze(false)
	rec := l.t.recovery(healed)
	bound := l.bound
	if bound == 0 {
		bound = recoveryBound
	}
	if rec > bound {
		l.t.violate("service resumed %.1f s after the fault ended; the bound is %.1f s", rec.Seconds(), bound.Seconds())
	}
	switch {
	case rec < 0:
		res.recovery = "not recovered"
		l.t.violate("some operation never succeeded again within 30 s")
	case l.t.lastFailAfter(healed):
		res.recovery = fmt.Sprintf("%.1f s", rec.Seconds())
	default:
		res.recovery = "no failure after it"
	}
	fctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	l.finalChecks(fctx)
	cancel()
	res.outcomes = l.t.summary()
	res.total, res.ok = l.t.totals()
	res.violations, res.held = l.t.violations, l.t.nviol == 0
	return res
}

// --- faults -------------------------------------------------------------

func redisSigkill(_ context.Context, e *env, _ *load) (time.Time, string, error) {
	if err := e.redis.Kill(); err != nil {
		return time.Time{}, "", err
	}
	time.Sleep(3 * time.Second)
	if err := startNode(e.redis); err != nil {
		return time.Time{}, "", err
	}
	return time.Now(), "", nil
}

func pgRestart(down time.Duration) func(context.Context, *env, *load) (time.Time, string, error) {
	return func(_ context.Context, e *env, _ *load) (time.Time, string, error) {
		if err := e.pg.stop(); err != nil {
			return time.Time{}, "", err
		}
		time.Sleep(down)
		if err := e.pg.start(); err != nil {
			return time.Time{}, "", err
		}
		return time.Now(), "", nil
	}
}

func pgStall(_ context.Context, e *env, _ *load) (time.Time, string, error) {
	pids := e.pg.pids()
	e.pg.signalAll(syscall.SIGSTOP)
	time.Sleep(5 * time.Second)
	e.pg.signalAll(syscall.SIGCONT)
	return time.Now(), fmt.Sprintf("%d processes stopped", len(pids)), nil
}

func sigtermRestart(_ context.Context, e *env, _ *load) (time.Time, string, error) {
	rep := e.replicas[0]
	t0 := time.Now()
	if err := rep.sigterm(); err != nil {
		return time.Time{}, "", err
	}
	exited := time.Since(t0)
	if err := rep.start(); err != nil {
		return time.Time{}, "", err
	}
	return time.Now(), fmt.Sprintf("exit %.1f s after SIGTERM (shutdown delay 5 s)", exited.Seconds()), nil
}

func keyRotation(_ context.Context, e *env, _ *load) (time.Time, string, error) {
	for range 3 {
		if _, err := rotateKey(e); err != nil {
			return time.Time{}, "", err
		}
		time.Sleep(2 * time.Second)
	}
	return time.Now(), "", nil
}

func flushAll(_ context.Context, e *env, _ *load) (time.Time, string, error) {
	if _, err := e.redis.CLI("FLUSHALL"); err != nil {
		return time.Time{}, "", err
	}
	return time.Now(), "", nil
}

// eviction writes filler through a Lua loop until far more than maxmemory
// went in, so Redis evicts Lectern's keys too.
func eviction(_ context.Context, e *env, _ *load) (time.Time, string, error) {
	for i := range 30 {
		script := fmt.Sprintf("for i=1,1000 do redis.call('SET','filler:%d:'..i, string.rep('x', 1000)) end return 1", i)
		if _, err := e.redis.CLI("EVAL", script, "0"); err != nil {
			return time.Time{}, "", err
		}
		time.Sleep(100 * time.Millisecond)
	}
	info, _ := e.redis.CLI("INFO", "stats")
	return time.Now(), "evicted_keys " + infoValue(info, "evicted_keys"), nil
}

// redisOOM lowers maxmemory to what is used, so every write is refused
// (noeviction), for 5 s.
func redisOOM(_ context.Context, e *env, _ *load) (time.Time, string, error) {
	info, err := e.redis.CLI("INFO", "memory")
	if err != nil {
		return time.Time{}, "", err
	}
	used := infoValue(info, "used_memory")
	if _, err := e.redis.CLI("CONFIG", "SET", "maxmemory", used); err != nil {
		return time.Time{}, "", err
	}
	time.Sleep(5 * time.Second)
	if _, err := e.redis.CLI("CONFIG", "SET", "maxmemory", "0"); err != nil {
		return time.Time{}, "", err
	}
	return time.Now(), "maxmemory " + used + " bytes", nil
}

func sentinelFailover(_ context.Context, e *env, l *load) (time.Time, string, error) {
	old, err := e.sentinel.Master()
	if err != nil {
		return time.Time{}, "", err
	}
	killed := time.Now()
	if err := old.Kill(); err != nil {
		return time.Time{}, "", err
	}
	for time.Since(killed) < 30*time.Second {
		if m, err := e.sentinel.Master(); err == nil && m != old {
			took := time.Since(killed)
			l.bound = took + failoverGrace
			// The old master comes back; the sentinels make it a replica.
			if err := startNode(old); err != nil {
				return time.Time{}, "", err
			}
			return killed, fmt.Sprintf("promoted %s in %.1f s", m.Addr(), took.Seconds()), nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return time.Time{}, "", errors.New("no replica promoted within 30 s")
}

// sentinelLossyFailover makes the failover lose writes, as asynchronous
// replication can: the master drops its replicas' links (CLIENT KILL TYPE
// replica; they reconnect within a second), goes on taking writes for
// 0.3 s, and is killed with them; a replica without them is promoted. The
// note reports the bytes of the replication stream the replicas never got.
func sentinelLossyFailover(_ context.Context, e *env, l *load) (time.Time, string, error) {
	old, err := e.sentinel.Master()
	if err != nil {
		return time.Time{}, "", err
	}
	dropped := time.Now()
	if _, err := old.CLI("CLIENT", "KILL", "TYPE", "replica"); err != nil {
		return time.Time{}, "", err
	}
	time.Sleep(300 * time.Millisecond)
	offset := func(n *redistest.Node) int64 {
		info, _ := n.CLI("INFO", "replication")
		v, _ := strconv.ParseInt(infoValue(info, "master_repl_offset"), 10, 64)
		return v
	}
	var got int64
	for _, n := range e.sentinel.Redis {
		if n != old && n.Running() {
			got = max(got, offset(n))
		}
	}
	written := offset(old)
	killed := time.Now()
	if err := old.Kill(); err != nil {
		return time.Time{}, "", err
	}
	for time.Since(killed) < 30*time.Second {
		if m, err := e.sentinel.Master(); err == nil && m != old {
			took := time.Since(killed)
			l.bound = took + failoverGrace
			if err := startNode(old); err != nil {
				return time.Time{}, "", err
			}
			return killed, fmt.Sprintf("promoted %s in %.1f s; the replicas lacked the last %d bytes of the old master's writes; "+
				"%d revocations were acknowledged in that window",
				m.Addr(), took.Seconds(), written-got, l.revokedBetween(dropped, killed)), nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return time.Time{}, "", errors.New("no replica promoted within 30 s")
}

func clusterNodeLoss(_ context.Context, e *env, l *load) (time.Time, string, error) {
	masters, err := e.cluster.Masters()
	if err != nil || len(masters) == 0 {
		return time.Time{}, "", fmt.Errorf("cluster masters: %v", err)
	}
	victim := masters[0]
	killed := time.Now()
	if err := victim.Kill(); err != nil {
		return time.Time{}, "", err
	}
	if err := e.cluster.WaitHealthy(30 * time.Second); err != nil {
		return time.Time{}, "", err
	}
	took := time.Since(killed)
	l.bound = took + failoverGrace
	if err := startNode(victim); err != nil {
		return time.Time{}, "", err
	}
	return killed, fmt.Sprintf("replica took over in %.1f s", took.Seconds()), nil
}

// rollingRestart restarts the replicas one at a time behind nginx, then
// checks that changes made through one replica reach the others.
func rollingRestart(ctx context.Context, e *env, l *load) (time.Time, string, error) {
	var notes []string
	for _, rep := range e.replicas {
		t0 := time.Now()
		if err := rep.sigterm(); err != nil {
			return time.Time{}, "", err
		}
		exit := time.Since(t0)
		if err := rep.start(); err != nil {
			return time.Time{}, "", err
		}
		notes = append(notes, fmt.Sprintf("%s: exit %.1f s, back %.1f s", rep.name, exit.Seconds(), time.Since(t0).Seconds()))
		time.Sleep(time.Second)
	}
	healed := time.Now()
	prop, err := propagation(ctx, e, l)
	if err != nil {
		return time.Time{}, "", err
	}
	notes = append(notes, prop)
	return healed, strings.Join(notes, "; "), nil
}

// --- races --------------------------------------------------------------

// codeRace: 100 codes, each sent by 20 concurrent exchanges: exactly one
// 200 per code.
func codeRace(ctx context.Context, e *env, res *result) error {
	c, err := e.newClient()
	if err != nil {
		return err
	}
	t := newTally()
	const codes, racers = 100, 20
	for batch := 0; batch < codes; batch += 10 {
		type code struct{ clientID, code, verifier string }
		var cs []code
		for i := batch; i < batch+10; i++ {
			id := e.r.clients[i%len(e.r.clients)]
			cd, v, out := c.authorize(id)
			if out != outOK && out != outSignedInAgain {
				return fmt.Errorf("authorize: %s", out)
			}
			cs = append(cs, code{id, cd, v})
		}
		wins := race(t, "exchange", len(cs), racers, func(i int) outcome {
			_, out := c.exchange(ctx, cs[i].clientID, cs[i].code, cs[i].verifier)
			return out
		})
		for i, w := range wins {
			if w != 1 {
				t.violate("code %d of batch %d: %d winners (exactly one wanted)", i, batch/10, w)
			}
		}
	}
	res.outcomes, res.violations = t.summary(), t.violations
	res.total, res.ok = t.totals()
	res.recovery = "n/a"
	res.note = fmt.Sprintf("%d codes × %d", codes, racers)
	return nil
}

// refreshRace: 100 refresh tokens, each used by 10 concurrent requests:
// exactly one 200 per token.
func refreshRace(ctx context.Context, e *env, res *result) error {
	c, err := e.newClient()
	if err != nil {
		return err
	}
	t := newTally()
	const tokens, racers = 100, 10
	type chain struct{ clientID, rt string }
	var chains []chain
	for i := range tokens {
		id := e.r.clients[i%len(e.r.clients)]
		tok, steps := c.flow(ctx, id)
		if tok == nil {
			return fmt.Errorf("flow: %v", steps)
		}
		chains = append(chains, chain{id, tok.RefreshToken})
	}
	wins := race(t, "refresh", tokens, racers, func(i int) outcome {
		_, out := c.refresh(ctx, chains[i].clientID, chains[i].rt)
		return out
	})
	for i, w := range wins {
		if w != 1 {
			t.violate("refresh token %d: %d winners (exactly one wanted)", i, w)
		}
	}
	res.outcomes, res.violations = t.summary(), t.violations
	res.total, res.ok = t.totals()
	res.recovery = "n/a"
	res.note = fmt.Sprintf("%d tokens × %d", tokens, racers)
	return nil
}

// race sends racers concurrent requests for each of n items at once (try
// makes one for item i) and returns the 200s per item. Every other answer
// must be a refusal (400 invalid_grant) or a 503.
func race(t *tally, op string, n, racers int, try func(i int) outcome) []int {
	wins := make([]int, n)
	var mu sync.Mutex
	var wg sync.WaitGroup
	startGun := make(chan struct{})
	for i := range n {
		for range racers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-startGun
				out := try(i)
				t.add(op, out, out == outOK || strings.HasPrefix(string(out), "400 invalid_grant"))
				if out == outOK {
					mu.Lock()
					wins[i]++
					mu.Unlock()
				} else if s := out.status(); s >= 500 && s != 503 || s == 0 {
					t.violate("a racing %s answered %s", op, out)
				}
			}()
		}
	}
	close(startGun)
	wg.Wait()
	return wins
}

func infoValue(info, field string) string {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			return v
		}
	}
	return "?"
}

// rotateKey rotates Demo Academy's signing key with the CLI, the new key
// signing at once, and returns its kid.
func rotateKey(e *env) (string, error) {
	out, err := runCmd(e.lecternEnv(), e.r.bin, "keys", "rotate", "--site", "demo-academy", "--activate-in", "0s", "--json")
	if err != nil {
		return "", err
	}
	var k struct {
		KID string `json:"kid"`
	}
	if err := json.Unmarshal([]byte(out), &k); err != nil || k.KID == "" {
		return "", fmt.Errorf("lectern keys rotate --json printed %q", out)
	}
	return k.KID, nil
}

// startNode starts a Redis node again, retrying while its port is, for a
// moment, the local end of an outgoing connection (see retryBind).
func startNode(n *redistest.Node) error {
	for attempt := 0; ; attempt++ {
		err := n.Start()
		if err == nil || attempt == 20 || !strings.Contains(err.Error(), "in use") {
			return err
		}
		time.Sleep(250 * time.Millisecond)
	}
}
