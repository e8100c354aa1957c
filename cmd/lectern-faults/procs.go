package main

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// proc is one child process the driver started. Every proc is in the
// registry until it exits, so cleanup stops what is left by PID, also when
// a scenario fails.
type proc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	log  string
}

var registry struct {
	mu    sync.Mutex
	procs map[*proc]struct{}
}

// startProc starts bin with args, its output appended to logPath. cred,
// when set, runs it as another user (PostgreSQL refuses to run as root).
func startProc(name, logPath string, cred *syscall.Credential, env []string, bin string, args ...string) (*proc, error) {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = env
	// Pdeathsig: a driver that dies leaves no process behind.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Credential: cred}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, done: make(chan struct{}), log: logPath}
	registry.mu.Lock()
	if registry.procs == nil {
		registry.procs = map[*proc]struct{}{}
	}
	registry.procs[p] = struct{}{}
	registry.mu.Unlock()
	go func() {
		_ = cmd.Wait()
		logf.Close()
		registry.mu.Lock()
		delete(registry.procs, p)
		registry.mu.Unlock()
		close(p.done)
	}()
	return p, nil
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

func (p *proc) running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// stop sends sig and waits up to timeout for the exit, then kills.
func (p *proc) stop(sig syscall.Signal, timeout time.Duration) error {
	if !p.running() {
		return nil
	}
	if err := p.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(timeout):
		_ = p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("%s (pid %d) ignored %v for %s; killed", p.name, p.pid(), sig, timeout)
	}
}

// logTail is the end of the process' log, for error messages.
func (p *proc) logTail() string {
	b, _ := os.ReadFile(p.log)
	if len(b) > 3000 {
		b = b[len(b)-3000:]
	}
	return string(b)
}

// stopAll kills whatever the driver started and is still running.
func stopAll() {
	registry.mu.Lock()
	var ps []*proc
	for p := range registry.procs {
		ps = append(ps, p)
	}
	registry.mu.Unlock()
	for _, p := range ps {
		_ = p.stop(syscall.SIGKILL, 5*time.Second)
	}
}

// --- PostgreSQL ---------------------------------------------------------

// pgBin is where Debian's PostgreSQL server binaries are: version 15, or
// else the newest installed (LECTERN_FAULTS_PGBIN overrides).
var pgBin = findPGBin()

func findPGBin() string {
	if d := os.Getenv("LECTERN_FAULTS_PGBIN"); d != "" {
		return d
	}
	const preferred = "/usr/lib/postgresql/15/bin"
	if _, err := os.Stat(filepath.Join(preferred, "initdb")); err == nil {
		return preferred
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	best, bestVer := preferred, 0
	for _, d := range dirs {
		v, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(d))))
		if v > bestVer {
			best, bestVer = filepath.Dir(d), v
		}
	}
	return best
}

// postgres is one PostgreSQL server on a data directory of its own.
type postgres struct {
	dir  string
	port int
	cred *syscall.Credential
	p    *proc
}

// pgCredential runs PostgreSQL as the postgres user when the driver is
// root (it refuses to run as root), else as the driver's own user.
func pgCredential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root needs a postgres user to run PostgreSQL as: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func chownTree(dir string, cred *syscall.Credential) error {
	if cred == nil {
		return nil
	}
	return filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, int(cred.Uid), int(cred.Gid))
	})
}

// initPostgres runs initdb into dir (trust authentication on loopback,
// user postgres).
func initPostgres(dir string, port int) (*postgres, error) {
	cred, err := pgCredential()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := chownTree(dir, cred); err != nil {
		return nil, err
	}
	cmd := exec.Command(filepath.Join(pgBin, "initdb"), "-D", dir, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync", "--locale=C")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb: %w\n%s", err, out)
	}
	return &postgres{dir: dir, port: port, cred: cred}, nil
}

// copyPostgres copies a stopped template data directory to dir.
func copyPostgres(template, dir string, port int) (*postgres, error) {
	cred, err := pgCredential()
	if err != nil {
		return nil, err
	}
	if out, err := exec.Command("cp", "-a", template, dir).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("copying the template database: %w: %s", err, out)
	}
	_ = os.Remove(filepath.Join(dir, "postmaster.pid"))
	return &postgres{dir: dir, port: port, cred: cred}, nil
}

func (g *postgres) url() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", g.port)
}

// start runs the postmaster itself (not pg_ctl), so the driver holds its
// PID, and waits until it accepts connections.
func (g *postgres) start() error {
	if err := portFree(g.port); err != nil {
		return err
	}
	return retryBind(func() (*proc, error) {
		p, err := startProc("postgres", filepath.Join(filepath.Dir(g.dir), "postgres.log"), g.cred, nil,
			filepath.Join(pgBin, "postgres"), "-D", g.dir, "-p", strconv.Itoa(g.port),
			"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="+g.dir,
			"-c", "fsync=off", "-c", "full_page_writes=off", "-c", "max_connections=200")
		if err != nil {
			return nil, err
		}
		g.p = p
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			if !p.running() {
				return p, fmt.Errorf("postgres exited at start:\n%s", p.logTail())
			}
			if exec.Command(filepath.Join(pgBin, "pg_isready"), "-q", "-h", "127.0.0.1", "-p", strconv.Itoa(g.port)).Run() == nil {
				return p, nil
			}
			time.Sleep(100 * time.Millisecond)
		}
		return p, fmt.Errorf("postgres on %d not ready within 30s:\n%s", g.port, p.logTail())
	})
}

// stop is a fast shutdown (SIGINT: sessions ended, no waiting for clients).
func (g *postgres) stop() error {
	if g.p == nil {
		return nil
	}
	return g.p.stop(syscall.SIGINT, 30*time.Second)
}

// pids are the postmaster and its children (backends, background workers).
func (g *postgres) pids() []int {
	if g.p == nil || !g.p.running() {
		return nil
	}
	root := g.p.pid()
	out := []int{root}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 1 && f[1] == strconv.Itoa(root) {
			out = append(out, pid)
		}
	}
	return out
}

// signalAll sends sig to the postmaster and every child it has.
func (g *postgres) signalAll(sig syscall.Signal) {
	for _, pid := range g.pids() {
		_ = syscall.Kill(pid, sig)
	}
}

// --- lectern serve ------------------------------------------------------

// replica is one `lectern serve`.
type replica struct {
	name    string
	bin     string
	port    int
	env     []string
	logPath string
	p       *proc
}

func (r *replica) addr() string { return "127.0.0.1:" + strconv.Itoa(r.port) }

// start runs the replica and waits until /readyz answers 200.
func (r *replica) start() error {
	if err := portFree(r.port); err != nil {
		return err
	}
	env := append(os.Environ(), r.env...)
	env = append(env, "LECTERN_ADDR="+r.addr())
	return retryBind(func() (*proc, error) {
		// No metrics listener: one port fewer that an outgoing
		// connection may hold (see retryBind).
		p, err := startProc(r.name, r.logPath, nil, env, r.bin, "serve", "--metrics-addr=")
		if err != nil {
			return nil, err
		}
		r.p = p
		if err := waitReady(r.addr(), 30*time.Second, p); err != nil {
			return p, fmt.Errorf("%s: %w\n%s", r.name, err, p.logTail())
		}
		return p, nil
	})
}

// retryBind starts a server again when it exited because its port was
// taken: the driver's ports are in Linux's ephemeral range (32768-60999),
// so a port may be, for a moment, the local end of some outgoing loopback
// connection (nginx opens one per proxied request).
func retryBind(start func() (*proc, error)) error {
	for attempt := 0; ; attempt++ {
		p, err := start()
		if err == nil || p == nil || p.running() || attempt == 20 ||
			!strings.Contains(p.logTail(), "in use") {
			return err
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// sigterm sends SIGTERM and waits for the exit (shutdown delay + drain).
func (r *replica) sigterm() error {
	if r.p == nil {
		return nil
	}
	return r.p.stop(syscall.SIGTERM, 60*time.Second)
}

func waitReady(addr string, timeout time.Duration, p *proc) error {
	c := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if p != nil && !p.running() {
			return errors.New("exited at start")
		}
		resp, err := c.Get("http://" + addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("/readyz on %s not 200 within %s", addr, timeout)
}

// portFree fails when something already listens on port (a leftover of an
// earlier run, or another program: the driver never stops what it did not
// start).
func portFree(port int) error {
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), 200*time.Millisecond)
	if err == nil {
		c.Close()
		return fmt.Errorf("port %d is in use by another process", port)
	}
	return nil
}

// freePorts returns n ports from [from, to) that can be bound now. The
// driver's range is inside Linux's ephemeral range, so a port may be the
// local end of a long-lived outgoing connection (a replication link, a
// connection pool): topologies take whichever ports are free.
func freePorts(n, from, to int) ([]int, error) {
	var out []int
	for p := from; p < to && len(out) < n; p++ {
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			continue
		}
		ln.Close()
		out = append(out, p)
	}
	if len(out) < n {
		return nil, fmt.Errorf("fewer than %d free ports in %d-%d", n, from, to)
	}
	return out, nil
}

// runCmd runs a short command (the CLI) with env and returns its output.
func runCmd(env []string, bin string, args ...string) (string, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w: %s", filepath.Base(bin), strings.Join(args, " "), err, out)
	}
	return string(out), nil
}
