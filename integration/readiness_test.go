package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lectern/lectern/internal/redistest"
	"github.com/lectern/lectern/internal/server"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/storage/cache"
	"github.com/lectern/lectern/vocab"
)

// readyzDoc is the /readyz document.
type readyzDoc struct {
	Status  string            `json:"status"`
	Checks  map[string]string `json:"checks"`
	Reasons map[string]string `json:"reasons"`
	Cache   map[string]string `json:"cache"`
}

func (ts *testServer) readyz(t *testing.T) (int, readyzDoc) {
	t.Helper()
	code, _, body := ts.get(t, "http://10.1.2.3:8080", "/readyz")
	var d readyzDoc
	if err := json.Unmarshal(body, &d); err != nil {
		t.Fatalf("/readyz: %d %s", code, body)
	}
	return code, d
}

// Issue 15: /readyz said 200 while a full Redis (noeviction at maxmemory)
// refused every write, so every sign-in answered 503. Readiness now writes
// to the cache: a full Redis makes the replica unready, with the reason,
// and it is ready again once Redis has room.
func TestReadinessRedisOutOfMemory(t *testing.T) {
	n := redistest.StartServer(t, 27311, "--maxmemory", "8mb", "--maxmemory-policy", "noeviction")
	ts := startServer(t, backend{name: "private redis", redisURL: "redis://" + n.Addr() + "/0"}, nil)
	code, d := ts.readyz(t)
	if code != 200 || d.Status != "ok" || d.Cache["kind"] != "redis" || d.Cache["maxmemory_policy"] != "noeviction" || d.Cache["topology"] != "redis" {
		t.Fatalf("/readyz with room in Redis: %d %+v", code, d)
	}

	// Fill Redis to its maxmemory: large values first, then small ones
	// (a large write is refused while a small one still fits, since the
	// request itself counts), until even a small write is refused after
	// Redis has released its request buffers.
	ctx := context.Background()
	var filled []string
	fill := func(size int) {
		value := bytes.Repeat([]byte("x"), size)
		for {
			k := storage.PlatformKey("fill", strconv.Itoa(len(filled)))
			err := ts.app.Cache.Set(ctx, k, value, time.Hour)
			if err != nil {
				if !strings.Contains(cache.Describe(err), "out of memory") {
					t.Fatalf("filling Redis: %v", err)
				}
				return
			}
			filled = append(filled, k)
			if len(filled) > 200000 {
				t.Fatal("Redis never filled up; is maxmemory set?")
			}
		}
	}
	fill(256 << 10)
	fill(4 << 10)
	for range 20 {
		fill(64)
		time.Sleep(300 * time.Millisecond)
		if err := ts.app.Cache.Set(ctx, storage.PlatformKey("probe", "x"), []byte("x"), time.Hour); err != nil {
			break
		}
	}
	eventually(t, 5*time.Second, func() error {
		code, d := ts.readyz(t)
		if code != 503 || d.Status != "unavailable" || d.Checks["cache"] != "unavailable" || !strings.Contains(d.Reasons["cache"], "out of memory") {
			return fmt.Errorf("/readyz with Redis full: %d %+v", code, d)
		}
		if d.Checks["database"] != "ok" {
			return fmt.Errorf("the database is fine, /readyz says %+v", d)
		}
		return nil
	})
	if err := ts.app.Cache.Delete(ctx, filled...); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, func() error {
		if code, d := ts.readyz(t); code != 200 {
			return fmt.Errorf("/readyz after Redis has room again: %d %+v", code, d)
		}
		return nil
	})
}

// A Redis that may evict keys is refused at start unless allowed, and the
// policy shows in /readyz.
func TestRedisEvictingPolicyRefusedAtStart(t *testing.T) {
	n := redistest.StartServer(t, 27312, "--maxmemory-policy", "allkeys-lru")
	bin := buildLectern(t)
	dir := t.TempDir()
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--data-dir", dir, "--redis-url", "redis://"+n.Addr()+"/0", "--shutdown-delay", "0s")
	cmd.Env = append(os.Environ(), "LECTERN_LOG_LEVEL=warn")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), "allkeys-lru") || !strings.Contains(string(out), "--redis-allow-eviction") {
		t.Fatalf("serve with an evicting Redis: %v\n%s\nwant exit 1 naming the policy and the flag", err, out)
	}

	ts := startServer(t, backend{name: "evicting redis, allowed", redisURL: "redis://" + n.Addr() + "/0"}, &serverOptions{
		configure: func(c *server.Config) { c.RedisAllowEviction = true },
	})
	if code, d := ts.readyz(t); code != 200 || d.Cache["maxmemory_policy"] != "allkeys-lru" {
		t.Fatalf("/readyz with eviction allowed: %d %+v", code, d)
	}
}

// Issue 15: on SIGTERM the listener closed at once, so a load balancer
// kept sending requests for its health-check interval. Now /readyz answers
// 503 for --shutdown-delay while every other request is still served; then
// the process drains and exits.
func TestSIGTERMDrainsReadinessFirst(t *testing.T) {
	bin := buildLectern(t)
	port := freePort(t)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	opsAddr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	cmd := exec.Command(bin, "serve", "--addr", addr, "--metrics-addr", opsAddr, "--data-dir", t.TempDir(), "--shutdown-delay", "3s")
	cmd.Env = append(os.Environ(), "LECTERN_LOG_LEVEL=info", "LECTERN_ACCESS_LOG=false")
	var logs syncBuffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		select {
		case <-exited:
		default:
			_ = cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("lectern log:\n%s", logs.String())
		}
	})
	client, opsClient := loopbackClient(addr), loopbackClient(opsAddr)
	get := func(host, path string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, "http://"+host+path, nil)
		c := client
		if host == opsAddr {
			c = opsClient
		}
		resp, err := c.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		return resp.StatusCode, b.String()
	}
	site := "localhost:" + strconv.Itoa(port) // the demo's Academy origin
	eventually(t, 20*time.Second, func() error {
		if code, body := get(site, "/readyz"); code != 200 {
			return fmt.Errorf("/readyz %d %s", code, body)
		}
		return nil
	})

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	eventually(t, 2*time.Second, func() error {
		code, body := get(site, "/readyz")
		if code != 503 || !strings.Contains(body, `"status":"draining"`) {
			return fmt.Errorf("/readyz after SIGTERM: %d %s", code, body)
		}
		return nil
	})
	if code, body := get(site, vocab.ProtectedResourcePath); code != 200 {
		t.Fatalf("a normal request during the shutdown delay: %d %s; want 200", code, body)
	}
	// The metrics listener says so too, and is still scraped (audit R:
	// it closed at the signal).
	if code, body := get(opsAddr, "/readyz"); code != 503 || !strings.Contains(body, `"status":"draining"`) {
		t.Fatalf("the metrics listener's /readyz during the shutdown delay: %d %s; want 503 draining", code, body)
	}
	if code, body := get(opsAddr, "/metrics"); code != 200 || !strings.Contains(body, "lectern_ready 0") {
		t.Fatalf("the metrics listener's /metrics during the shutdown delay: %d; want 200 with lectern_ready 0\n%.300s", code, body)
	}
	// Keep-alive connections end after each answer during the delay, so
	// none is left idle (and closed under a client) when the listener
	// closes.
	if resp, err := client.Get("http://" + site + vocab.ProtectedResourcePath); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
		if !resp.Close {
			t.Fatal("an answer during the shutdown delay keeps its connection open (no Connection: close)")
		}
	}
	if d := time.Since(start); d > 2500*time.Millisecond {
		t.Fatalf("the checks took %v of the 3 s delay; the machine is too slow for this test", d)
	}
	select {
	case <-exited:
		if waitErr != nil {
			t.Fatalf("lectern exited with %v after SIGTERM", waitErr)
		}
		if d := time.Since(start); d < 2500*time.Millisecond {
			t.Fatalf("lectern exited %v after SIGTERM, before its 3 s shutdown delay", d)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("lectern did not exit after SIGTERM")
	}
	if code, _ := get(site, "/healthz"); code != 0 {
		t.Fatalf("still answering after exit: %d", code)
	}
	if code, _ := get(opsAddr, "/healthz"); code != 0 {
		t.Fatalf("the metrics listener still answering after exit: %d", code)
	}
}

// buildLectern builds cmd/lectern once per test binary run.
func buildLectern(t *testing.T) string {
	t.Helper()
	lecternBin.once.Do(func() {
		dir, err := os.MkdirTemp("", "lectern-bin-")
		if err != nil {
			lecternBin.err = err
			return
		}
		lecternBin.path = filepath.Join(dir, "lectern")
		out, err := exec.Command("go", "build", "-o", lecternBin.path, "github.com/lectern/lectern/cmd/lectern").CombinedOutput()
		if err != nil {
			lecternBin.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if lecternBin.err != nil {
		t.Fatal(lecternBin.err)
	}
	return lecternBin.path
}

var lecternBin struct {
	once sync.Once
	path string
	err  error
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
