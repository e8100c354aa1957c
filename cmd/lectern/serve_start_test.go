package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lectern/lectern/internal/logtest"
)

// served is what one run of serve left: its exit code, stdout, stderr
// (the CLI's messages) and its log (the process's stderr).
type served struct {
	code            int
	out, errs, logs string
}

// serveUntil runs lectern serve with args until its stdout or log holds
// until (or for at most a while when until is ""), then stops it as a
// signal would. The log is read from a pipe standing in for the process's
// stderr.
func serveUntil(t *testing.T, c *cli, until string, args ...string) served {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, logger := os.Stderr, slog.Default()
	os.Stderr = w
	defer func() { os.Stderr = stderr; slog.SetDefault(logger) }()
	var logs logtest.Buffer
	copied := make(chan struct{})
	go func() { _, _ = io.Copy(&logs, r); close(copied) }()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb logtest.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, append([]string{"serve"}, args...), &out, &errb, func(k string) (string, bool) { v, ok := c.env[k]; return v, ok })
	}()
	deadline := time.After(60 * time.Second)
	if until == "" {
		deadline = time.After(3 * time.Second)
	}
	var code int
wait:
	for {
		select {
		case code = <-done:
			break wait
		case <-deadline:
			cancel()
			code = <-done
			break wait
		case <-time.After(50 * time.Millisecond):
			if until != "" && (strings.Contains(out.String(), until) || strings.Contains(logs.String(), until)) {
				cancel()
				code = <-done
				break wait
			}
		}
	}
	_ = w.Close()
	<-copied
	_ = r.Close()
	return served{code: code, out: out.String(), errs: errb.String(), logs: logs.String()}
}

// freePort is a port nothing listens on (as far as the test knows).
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// serve refuses to start under a key-encryption key that opens none of the
// stored signing keys, with the CLI's message, rather than serving with
// every token request failing; the old key as --kek-previous opens them.
func TestServeRefusesWrongKEK(t *testing.T) {
	c := newCLI(t, true)
	c.ok("site", "create", "--slug", "k1", "--name", "K", "--origin", "https://k1.example.test")
	c.env["LECTERN_KEK"] = otherKEK
	s := serveUntil(t, c, "listening", "--addr", "127.0.0.1:0", "--metrics-addr", "", "--shutdown-delay", "0s", "--smtp-url", "smtp://127.0.0.1:1")
	if s.code != 1 || !strings.Contains(s.errs, "lectern serve: keys: the configured key-encryption keys did not seal this site's keys") ||
		!strings.Contains(s.errs, "LECTERN_KEK_PREVIOUS") || strings.Contains(s.logs, "listening") {
		t.Fatalf("serve under another KEK: exit %d\nstderr: %s\nlog: %s", s.code, s.errs, s.logs)
	}
	c.env["LECTERN_KEK_PREVIOUS"] = testKEK
	s = serveUntil(t, c, "listening", "--addr", "127.0.0.1:0", "--metrics-addr", "", "--shutdown-delay", "0s", "--smtp-url", "smtp://127.0.0.1:1")
	if s.code != 0 || !strings.Contains(s.logs, "listening") {
		t.Fatalf("serve with the old KEK as --kek-previous: exit %d\nstderr: %s\nlog: %s", s.code, s.errs, s.logs)
	}
}

// The embedded default's first start (no keys yet) seeds the demo under its
// generated KEK and serves; a later start whose generated KEK was lost is
// refused.
func TestServeEmbeddedKEK(t *testing.T) {
	c := newCLI(t, false)
	c.env["LECTERN_DEMO_SEED"] = "true"
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	s := serveUntil(t, c, "Lectern is serving the demo sites", "--addr", addr, "--metrics-addr", "", "--shutdown-delay", "0s")
	if s.code != 0 || !strings.Contains(s.out, "Lectern is serving the demo sites") {
		t.Fatalf("first embedded start: exit %d\nstdout: %s\nstderr: %s\nlog: %s", s.code, s.out, s.errs, s.logs)
	}
	if err := os.Remove(filepath.Join(c.env["LECTERN_DATA_DIR"], "kek")); err != nil {
		t.Fatal(err)
	}
	s = serveUntil(t, c, "listening", "--addr", addr, "--metrics-addr", "", "--shutdown-delay", "0s")
	if s.code != 1 || !strings.Contains(s.errs, "key-encryption") {
		t.Fatalf("embedded start after its KEK was lost: exit %d\nstderr: %s", s.code, s.errs)
	}
}

// The banner prints the origins the demo was seeded with, and says so when
// serve listens on another port, where no demo site answers.
func TestServeBannerShowsSeededPort(t *testing.T) {
	c := newCLI(t, false)
	c.env["LECTERN_DEMO_SEED"] = "true"
	a, b := freePort(t), freePort(t)
	s := serveUntil(t, c, "Lectern is serving", "--addr", "127.0.0.1:"+strconv.Itoa(a), "--metrics-addr", "", "--shutdown-delay", "0s")
	if s.code != 0 || !strings.Contains(s.out, "http://localhost:"+strconv.Itoa(a)) || strings.Contains(s.out, "NOTE") {
		t.Fatalf("first start on %d: exit %d\n%s\n%s", a, s.code, s.out, s.errs)
	}
	s = serveUntil(t, c, "Lectern is serving", "--addr", "127.0.0.1:"+strconv.Itoa(b), "--metrics-addr", "", "--shutdown-delay", "0s")
	if s.code != 0 || !strings.Contains(s.out, "try: curl http://localhost:"+strconv.Itoa(a)+"/") ||
		strings.Contains(s.out, "localhost:"+strconv.Itoa(b)) || !strings.Contains(s.out, "seeded for port "+strconv.Itoa(a)) {
		t.Fatalf("second start on %d, seeded on %d: exit %d\n%s\n%s", b, a, s.code, s.out, s.errs)
	}
}

// A taken metrics port fails the start before the banner says the demo is
// served (and before the demo is seeded).
func TestServeMetricsPortTakenBeforeBanner(t *testing.T) {
	c := newCLI(t, false)
	c.env["LECTERN_DEMO_SEED"] = "true"
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	s := serveUntil(t, c, "listening", "--addr", "127.0.0.1:"+strconv.Itoa(freePort(t)), "--metrics-addr", taken.Addr().String(), "--shutdown-delay", "0s")
	if s.code != 1 || !strings.Contains(s.errs, "--metrics-addr") || strings.Contains(s.out, "Lectern is serving") || strings.Contains(s.logs, "demo seed created") {
		t.Fatalf("metrics port taken: exit %d\nstdout: %s\nstderr: %s\nlog: %s", s.code, s.out, s.errs, s.logs)
	}
}

// On PostgreSQL without --smtp-url, serve warns that mail stays in this
// replica's outbox folder; a folder that cannot be written is refused at
// start, where the mail would otherwise be retried and dropped.
func TestServeMailOutbox(t *testing.T) {
	c := newCLI(t, true)
	s := serveUntil(t, c, "listening", "--addr", "127.0.0.1:0", "--metrics-addr", "", "--shutdown-delay", "0s")
	if s.code != 0 || !strings.Contains(s.logs, "level=WARN") || !strings.Contains(s.logs, "outbox folder of this replica only") {
		t.Fatalf("postgres without --smtp-url: exit %d\nstderr: %s\nlog: %s", s.code, s.errs, s.logs)
	}
	file := writeFile(t, "not a directory")
	c.env["LECTERN_DATA_DIR"] = filepath.Join(file, "data")
	s = serveUntil(t, c, "listening", "--addr", "127.0.0.1:0", "--metrics-addr", "", "--shutdown-delay", "0s")
	if s.code != 1 || !strings.Contains(s.errs, "outbox") || !strings.Contains(s.errs, "--smtp-url") || strings.Contains(s.logs, "listening") {
		t.Fatalf("unwritable outbox: exit %d\nstderr: %s\nlog: %s", s.code, s.errs, s.logs)
	}
	// With an SMTP server the folder is not used, and no warning is given.
	s = serveUntil(t, c, "listening", "--addr", "127.0.0.1:0", "--metrics-addr", "", "--shutdown-delay", "0s", "--smtp-url", "smtp://127.0.0.1:1")
	if s.code != 0 || strings.Contains(s.logs, "outbox folder") {
		t.Fatalf("with --smtp-url: exit %d\nstderr: %s\nlog: %s", s.code, s.errs, s.logs)
	}
}

// The platform's sender address is checked at start as a site's is.
func TestServeChecksMailFrom(t *testing.T) {
	c := newCLI(t, false)
	for _, v := range []string{"not an address", "Lectern <no-reply@example.test>", "a@b@c"} {
		c.fails(2, `--mail-from (LECTERN_MAIL_FROM) "`, "serve", "--addr", "127.0.0.1:0", "--metrics-addr", "", "--mail-from", v)
	}
	c.env["LECTERN_MAIL_FROM"] = "not an address"
	c.fails(2, "is not an e-mail address", "serve", "--addr", "127.0.0.1:0", "--metrics-addr", "")
}

// Errors say what was expected: a duration without its unit, a log level
// that is not one; a bad flag points at --help rather than printing it; and
// an error names the whole command.
func TestServeFlagMessages(t *testing.T) {
	c := newCLI(t, false)
	code, _, errs := c.run("serve", "--shutdown-delay", "5")
	if code != 2 || !strings.Contains(errs, `invalid value "5" for flag -shutdown-delay: not a duration (such as 90s, 5m or 24h)`) ||
		strings.Contains(errs, "Usage:") || !strings.Contains(errs, "lectern serve --help") {
		t.Errorf("--shutdown-delay 5: exit %d\n%s", code, errs)
	}
	c.fails(2, "not a whole number", "serve", "--password-checks", "many")
	c.fails(2, "not a boolean", "serve", "--access-log=off")
	c.fails(1, `--log-level "verbose": must be debug, info, warn or error`, "serve", "--log-level", "verbose")
	if code, _, errs := c.run("serve", "--help"); code != 0 || !strings.Contains(errs, "--shutdown-delay duration") ||
		!strings.Contains(errs, "--password-checks int") || !strings.Contains(errs, "--access-log  ") {
		t.Errorf("serve --help: exit %d\n%s", code, errs)
	}
	c.fails(1, "lectern site update: no site", "site", "update", "--site", "nope", "--description", "x")
}
