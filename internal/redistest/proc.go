package redistest

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lectern/lectern/storage/storagetest"
)

// Binaries needed by the topologies.
const (
	serverBin   = "redis-server"
	sentinelBin = "redis-sentinel"
	cliBin      = "redis-cli"
)

// startTimeout bounds the wait for one process to answer PING.
const startTimeout = 10 * time.Second

// Available reports whether redis-server, redis-sentinel and redis-cli are
// on PATH, and if not, which is missing.
func Available() error {
	for _, b := range []string{serverBin, sentinelBin, cliBin} {
		if _, err := exec.LookPath(b); err != nil {
			return fmt.Errorf("%s not found on PATH (apt-get install redis-server redis-sentinel)", b)
		}
	}
	return nil
}

// need skips tb (or fails it when services are required) without the
// binaries.
func need(tb testing.TB) {
	tb.Helper()
	if err := Available(); err != nil {
		if storagetest.Required() {
			tb.Fatalf("Redis topologies are required (LECTERN_REQUIRE_SERVICES=1): %v", err)
		}
		tb.Skipf("%v; set LECTERN_REQUIRE_SERVICES=1 to fail instead of skipping", err)
	}
}

// Node is one redis-server or redis-sentinel process.
type Node struct {
	Port int
	bin  string
	args []string
	dir  string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

// Addr is the node's host:port.
func (n *Node) Addr() string { return "127.0.0.1:" + strconv.Itoa(n.Port) }

// PID is the process ID while the node runs, else 0.
func (n *Node) PID() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd == nil || n.cmd.Process == nil {
		return 0
	}
	return n.cmd.Process.Pid
}

// Running reports whether the node's process is alive.
func (n *Node) Running() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.done == nil {
		return false
	}
	select {
	case <-n.done:
		return false
	default:
		return true
	}
}

func newNode(port int, bin, dir string, args ...string) *Node {
	return &Node{Port: port, bin: bin, dir: dir, args: args}
}

// Start starts the node's process (again, after Kill or Stop: with the same
// arguments and directory, so a Cluster node keeps its identity) and waits
// until it answers PING.
func (n *Node) Start() error {
	n.mu.Lock()
	if n.done != nil {
		select {
		case <-n.done:
		default:
			n.mu.Unlock()
			return fmt.Errorf("redistest: node %d is running", n.Port)
		}
	}
	if c, err := net.DialTimeout("tcp", n.Addr(), 200*time.Millisecond); err == nil {
		c.Close()
		n.mu.Unlock()
		return fmt.Errorf("redistest: port %d is in use by another process (a leftover from an earlier run?)", n.Port)
	}
	logf, err := os.OpenFile(n.logPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		n.mu.Unlock()
		return err
	}
	cmd := exec.Command(n.bin, n.args...)
	cmd.Dir = n.dir
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		logf.Close()
		n.mu.Unlock()
		return fmt.Errorf("redistest: starting %s: %w", n.bin, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); logf.Close(); close(done) }()
	n.cmd, n.done = cmd, done
	n.mu.Unlock()

	deadline := time.Now().Add(startTimeout)
	for {
		if out, err := n.CLI("PING"); err == nil && strings.TrimSpace(out) == "PONG" {
			return nil
		}
		select {
		case <-done:
			return fmt.Errorf("redistest: %s on port %d exited at start:\n%s", n.bin, n.Port, n.logTail())
		default:
		}
		if time.Now().After(deadline) {
			_ = n.Kill()
			return fmt.Errorf("redistest: %s on port %d did not answer within %s:\n%s", n.bin, n.Port, startTimeout, n.logTail())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Kill ends the process with SIGKILL (a crash: nothing is saved or handed
// over) and waits for it.
func (n *Node) Kill() error { return n.signal(syscall.SIGKILL) }

// Stop ends the process with SIGTERM and waits for it.
func (n *Node) Stop() error { return n.signal(syscall.SIGTERM) }

func (n *Node) signal(sig syscall.Signal) error {
	n.mu.Lock()
	cmd, done := n.cmd, n.done
	n.mu.Unlock()
	if cmd == nil || done == nil {
		return nil
	}
	select {
	case <-done:
		return nil
	default:
	}
	if err := cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	select {
	case <-done:
		return nil
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		return fmt.Errorf("redistest: node %d ignored %v", n.Port, sig)
	}
}

// Restart stops the node (SIGKILL) and starts it again.
func (n *Node) Restart() error {
	if err := n.Kill(); err != nil {
		return err
	}
	return n.Start()
}

// CLI runs redis-cli against the node and returns its output.
func (n *Node) CLI(args ...string) (string, error) {
	full := append([]string{"-h", "127.0.0.1", "-p", strconv.Itoa(n.Port)}, args...)
	cmd := exec.Command(cliBin, full...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("redis-cli -p %d %s: %w: %s", n.Port, strings.Join(args, " "), err, errb.String())
	}
	s := out.String()
	if strings.HasPrefix(s, "ERR ") || strings.HasPrefix(s, "(error)") {
		return s, fmt.Errorf("redis-cli -p %d %s: %s", n.Port, strings.Join(args, " "), strings.TrimSpace(s))
	}
	return s, nil
}

func (n *Node) logPath() string { return filepath.Join(n.dir, "node.log") }

func (n *Node) logTail() string {
	b, _ := os.ReadFile(n.logPath())
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// waitFor polls cond until it returns nil or timeout passes.
func waitFor(timeout time.Duration, what string, cond func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := cond()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redistest: %s not within %s: %w", what, timeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// infoField returns field of an INFO-style "key:value" text.
func infoField(info, field string) string {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			return v
		}
	}
	return ""
}

// stopAll kills every node, last first.
func stopAll(nodes []*Node) {
	for i := len(nodes) - 1; i >= 0; i-- {
		_ = nodes[i].Kill()
	}
}

// StartServer starts one redis-server on port with extra configuration
// (e.g. "--maxmemory", "1mb") in a temporary directory and stops it when
// tb ends. Its URL is "redis://" + n.Addr() + "/0".
func StartServer(tb testing.TB, port int, extra ...string) *Node {
	tb.Helper()
	need(tb)
	n, err := NewServer(port, tb.TempDir(), extra...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = n.Kill() })
	return n
}

// NewServer is StartServer for a program (the fault driver): one
// redis-server on port keeping its files in dir, with extra configuration.
// The caller stops it (Kill or Stop). Check Available first.
func NewServer(port int, dir string, extra ...string) (*Node, error) {
	args := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--protected-mode", "no",
		"--save", "", "--appendonly", "no", "--dir", dir}, extra...)
	n := newNode(port, serverBin, dir, args...)
	if err := n.Start(); err != nil {
		return nil, err
	}
	return n, nil
}
