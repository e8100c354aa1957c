package main

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// result is one row of the report: one site count.
type result struct {
	sites      int
	importTime time.Duration
	startup    time.Duration
	idle       mem
	touched    mem
	loaded     mem
	touchTime  time.Duration
	coldDisc   *stats
	coldJWKS   *stats
	load       []*stats
	loadAvg    string
}

// mem is the server's memory at one moment, after a forced collection.
type mem struct {
	rss, heap uint64
}

// run is one count's database, files and server.
type run struct {
	cfg    *config
	n      int
	dbURL  string
	env    []string
	dir    string
	target string // 127.0.0.1:port
	srv    *exec.Cmd
	http   *http.Client
}

func (r *run) host(i int) string { return fmt.Sprintf("s%d.scale.test:%d", i, r.cfg.port) }

func runCount(ctx context.Context, cfg *config, n int) (res *result, err error) {
	r := &run{cfg: cfg, n: n, target: fmt.Sprintf("127.0.0.1:%d", cfg.port)}
	r.http = loopbackClient(r.target)
	res = &result{sites: n}
	if r.dir, err = os.MkdirTemp("", "lectern-scale-"); err != nil {
		return nil, err
	}
	defer os.RemoveAll(r.dir)

	db := fmt.Sprintf("lectern_scale_%d_%d", os.Getpid(), n)
	if err := psql(cfg.adminURL, "CREATE DATABASE "+db); err != nil {
		return nil, err
	}
	if !cfg.keep {
		defer func() {
			if derr := psql(cfg.adminURL, "DROP DATABASE IF EXISTS "+db+" WITH (FORCE)"); derr != nil && err == nil {
				err = derr
			}
		}()
	}
	u, err := url.Parse(cfg.adminURL)
	if err != nil {
		return nil, err
	}
	u.Path = "/" + db
	r.dbURL = u.String()
	kek := make([]byte, 32)
	_, _ = crand.Read(kek)
	r.env = append(os.Environ(), "DATABASE_URL="+r.dbURL, "LECTERN_KEK="+base64.StdEncoding.EncodeToString(kek),
		"LECTERN_LOG_LEVEL=warn", "LECTERN_ACCESS_LOG=false", "LECTERN_DEMO_SEED=false",
		"LECTERN_ADDR="+r.target, fmt.Sprintf("LECTERN_METRICS_ADDR=127.0.0.1:%d", cfg.port+1), "LECTERN_PPROF=true",
		"REDIS_URL="+cfg.redisURL, fmt.Sprintf("LECTERN_REDIS_PREFIX=lectern-scale-%d-%d:", os.Getpid(), n))
	if _, err := r.lectern(ctx, "migrate"); err != nil {
		return nil, err
	}

	// Import.
	file := filepath.Join(r.dir, "sites.jsonl")
	if err := writeSites(file, n, cfg.port); err != nil {
		return nil, err
	}
	t0 := time.Now()
	out, err := r.lectern(ctx, "site", "import", "--file", file, "--json")
	res.importTime = time.Since(t0)
	if err != nil {
		return nil, err
	}
	var rep struct{ Created int }
	if err := json.Unmarshal(out, &rep); err != nil || rep.Created != n {
		return nil, fmt.Errorf("import created %d of %d sites (%v)", rep.Created, n, err)
	}
	fmt.Fprintf(os.Stderr, "imported %d sites in %s\n", n, res.importTime.Round(time.Millisecond))

	flows, err := r.prepareFlows(ctx)
	if err != nil {
		return nil, fmt.Errorf("flow setup: %w", err)
	}

	// Start-up.
	if res.startup, err = r.start(ctx); err != nil {
		return nil, err
	}
	defer r.stop()
	fmt.Fprintf(os.Stderr, "ready after %s\n", res.startup.Round(time.Millisecond))
	time.Sleep(time.Second)
	if res.idle, err = r.memory("idle"); err != nil {
		return nil, err
	}

	// Cold sites: the first request to each of a random sample.
	order := rand.Perm(n)
	cold := min(cfg.cold, n)
	half := max(cold/2, 1)
	res.coldDisc = r.sequential("cold discovery (first request)", order[:half], discoveryPath)
	res.coldJWKS = r.sequential("cold JWKS (first request)", order[half:min(cold, n)], jwksPath)

	// One request of each kind to every site.
	t0 = time.Now()
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	if err := r.touchAll(ctx, all); err != nil {
		return nil, err
	}
	res.touchTime = time.Since(t0)
	if res.touched, err = r.memory("touched"); err != nil {
		return nil, err
	}

	// Load at random sites.
	if err := flows.signIn(r); err != nil {
		return nil, err
	}
	narrow := order[:min(10, n)]
	res.load = append(res.load,
		r.measure(ctx, "discovery, 10 sites", func(rng *rand.Rand) error { return r.get(narrow[rng.IntN(len(narrow))], discoveryPath) }),
		r.measure(ctx, fmt.Sprintf("discovery, all %d sites", n), func(rng *rand.Rand) error { return r.get(rng.IntN(n), discoveryPath) }),
		r.measure(ctx, fmt.Sprintf("JWKS, all %d sites", n), func(rng *rand.Rand) error { return r.get(rng.IntN(n), jwksPath) }),
		r.measure(ctx, fmt.Sprintf("code flow (authorize + token), %d sites", len(flows.sites)), flows.codeFlow),
		r.measure(ctx, fmt.Sprintf("userinfo, %d sites", len(flows.sites)), flows.userinfo),
	)
	if res.loaded, err = r.memory("loaded"); err != nil {
		return nil, err
	}
	res.loadAvg = loadAverage()
	return res, nil
}

const (
	discoveryPath = "/.well-known/openid-configuration"
	jwksPath      = "/.well-known/jwks.json"
)

func writeSites(path string, n, port int) error {
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, `{"slug":"s%d","name":"Course site %d","origin":"http://s%d.scale.test:%d","variant":"B","settings":{"id_tokens":true}}`+"\n", i, i, i, port)
	}
	return os.WriteFile(path, b.Bytes(), 0o600)
}

// lectern runs a lectern command to completion and returns its stdout.
func (r *run) lectern(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, r.cfg.bin, args...)
	cmd.Env = r.env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.Bytes(), fmt.Errorf("lectern %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	return out.Bytes(), nil
}

func psql(adminURL, sql string) error {
	out, err := exec.Command("psql", adminURL, "-qAtc", sql).CombinedOutput()
	if err != nil {
		return fmt.Errorf("psql %q: %v: %s", sql, err, out)
	}
	return nil
}

// start runs `lectern serve` and returns the time from exec to the first
// 200 of /readyz.
func (r *run) start(ctx context.Context) (time.Duration, error) {
	logf, err := os.Create(filepath.Join(r.dir, "serve.log"))
	if err != nil {
		return 0, err
	}
	r.srv = exec.Command(r.cfg.bin, "serve")
	r.srv.Env = r.env
	r.srv.Stdout, r.srv.Stderr = logf, logf
	t0 := time.Now()
	if err := r.srv.Start(); err != nil {
		return 0, err
	}
	for time.Since(t0) < 30*time.Second {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		resp, err := r.http.Get("http://" + r.target + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return time.Since(t0), nil
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	logs, _ := os.ReadFile(logf.Name())
	return 0, fmt.Errorf("server not ready after 30s:\n%s", logs)
}

// stop ends the server this run started (SIGTERM, then waits).
func (r *run) stop() {
	if r.srv == nil || r.srv.Process == nil {
		return
	}
	_ = r.srv.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = r.srv.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = r.srv.Process.Kill()
		<-done
	}
}

// memory forces a collection in the server (the heap profile endpoint's
// gc=1), keeps the profile, and reads RSS and the heap in use.
func (r *run) memory(label string) (mem, error) {
	// Not r.http: that one sends everything to the server's listener.
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/heap?gc=1", r.cfg.port+1))
	if err != nil {
		return mem{}, err
	}
	prof, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return mem{}, err
	}
	if resp.StatusCode != http.StatusOK {
		return mem{}, fmt.Errorf("heap profile: %d", resp.StatusCode)
	}
	if r.cfg.profileDir != "" {
		_ = os.MkdirAll(r.cfg.profileDir, 0o755)
		_ = os.WriteFile(filepath.Join(r.cfg.profileDir, fmt.Sprintf("heap-%d-%s.pb.gz", r.n, label)), prof, 0o644)
	}
	var m mem
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", r.srv.Process.Pid))
	if err != nil {
		return mem{}, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseUint(f[1], 10, 64)
			m.rss = kb << 10
		}
	}
	resp, err = http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", r.cfg.port+1)) // the metrics listener, not r.http
	if err != nil {
		return mem{}, err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, "go_memstats_heap_inuse_bytes "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			m.heap = uint64(f)
		}
	}
	if m.heap == 0 {
		return m, errors.New("no go_memstats_heap_inuse_bytes in /metrics")
	}
	fmt.Fprintf(os.Stderr, "memory %s: RSS %s, heap in use %s\n", label, mib(m.rss), mib(m.heap))
	return m, nil
}

// cpuTime is the server's user+system CPU time so far.
func (r *run) cpuTime() time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", r.srv.Process.Pid))
	if err != nil {
		return 0
	}
	// Fields after the command name (which may hold spaces) start after ")".
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100 // USER_HZ
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:3], " ")
}

func mib(b uint64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
