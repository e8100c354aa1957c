package mailpit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Version is the Mailpit release the tests run against.
const Version = "v1.33.1"

// Binary finds the Mailpit binary: $LECTERN_MAILPIT, the tools cache
// scripts/install-mailpit.sh fills, or mailpit on PATH.
func Binary() (string, error) {
	if p := os.Getenv("LECTERN_MAILPIT"); p != "" {
		return p, nil
	}
	if dir, err := os.UserCacheDir(); err == nil {
		p := filepath.Join(dir, "lectern-tools", "mailpit-"+Version, "mailpit")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	if p, err := exec.LookPath("mailpit"); err == nil {
		return p, nil
	}
	return "", errors.New("mailpit is not installed: run scripts/install-mailpit.sh (or set LECTERN_MAILPIT)")
}

// Required reports whether a missing Mailpit is a failure (CI) rather than
// a reason to skip.
func Required() bool { return os.Getenv("LECTERN_REQUIRE_SERVICES") == "1" }

// Server is a running Mailpit.
type Server struct {
	bin                string
	smtpPort, httpPort int
	dir                string

	mu  sync.Mutex
	cmd *exec.Cmd
}

// Start runs Mailpit with SMTP on 127.0.0.1:smtpPort and its API on
// 127.0.0.1:httpPort, accepting any SMTP credentials (also without TLS,
// as a test server may), and waits until both answer. A port of 0 is a
// free one the system picks, so that test runs side by side (two
// checkouts, two packages) never meet on a fixed port.
func Start(smtpPort, httpPort int) (*Server, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	for _, p := range []*int{&smtpPort, &httpPort} {
		if *p == 0 {
			if *p, err = freePort(); err != nil {
				return nil, err
			}
		}
	}
	dir, err := os.MkdirTemp("", "lectern-mailpit-")
	if err != nil {
		return nil, err
	}
	s := &Server{bin: bin, smtpPort: smtpPort, httpPort: httpPort, dir: dir}
	if err := s.start(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return nil
	}
	for _, p := range []int{s.smtpPort, s.httpPort} {
		if c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(p), 200*time.Millisecond); err == nil {
			_ = c.Close()
			return fmt.Errorf("mailpit: port %d is taken", p)
		}
	}
	cmd := exec.Command(s.bin,
		"--smtp", "127.0.0.1:"+strconv.Itoa(s.smtpPort),
		"--listen", "127.0.0.1:"+strconv.Itoa(s.httpPort),
		"--database", filepath.Join(s.dir, "mailpit.db"),
		"--smtp-auth-accept-any", "--smtp-auth-allow-insecure",
		"--disable-version-check", "--quiet", "--max", "5000")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("mailpit: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(15 * time.Second)
	for {
		select {
		case err := <-exited:
			return fmt.Errorf("mailpit exited at start: %v: %s", err, stderr.String())
		default:
		}
		if s.answers() {
			s.cmd = cmd
			go func() { <-exited }()
			return nil
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			return fmt.Errorf("mailpit did not answer within 15 s: %s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (s *Server) answers() bool {
	c, err := net.DialTimeout("tcp", s.SMTPAddr(), 200*time.Millisecond)
	if err != nil {
		return false
	}
	_ = c.Close()
	resp, err := http.Get(s.APIURL() + "/api/v1/info")
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// Stop ends the Mailpit process (by its PID) and waits until its SMTP port
// refuses connections. The received messages survive a Stop and Start.
func (s *Server) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return nil
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", s.SMTPAddr(), 100*time.Millisecond); err != nil {
			s.cmd = nil
			return nil
		} else {
			_ = c.Close()
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = s.cmd.Process.Kill()
	s.cmd = nil
	return nil
}

// Restart starts a stopped server again on the same ports.
func (s *Server) Restart() error { return s.start() }

// Close stops the server and removes its files.
func (s *Server) Close() {
	_ = s.Stop()
	_ = os.RemoveAll(s.dir)
}

// SMTPAddr is host:port of the SMTP listener.
func (s *Server) SMTPAddr() string { return "127.0.0.1:" + strconv.Itoa(s.smtpPort) }

// SMTPURL is the server as --smtp-url takes it.
func (s *Server) SMTPURL() string { return "smtp://" + s.SMTPAddr() }

// APIURL is the base URL of the HTTP API.
func (s *Server) APIURL() string { return "http://127.0.0.1:" + strconv.Itoa(s.httpPort) }

// Address is a mailbox in Mailpit's answers.
type Address struct {
	Name    string `json:"Name"`
	Address string `json:"Address"`
}

// Summary is a message in a list.
type Summary struct {
	ID        string    `json:"ID"`
	MessageID string    `json:"MessageID"`
	From      Address   `json:"From"`
	To        []Address `json:"To"`
	Subject   string    `json:"Subject"`
	Created   time.Time `json:"Created"`
}

// Message is one received message.
type Message struct {
	Summary
	Text string `json:"Text"`
	HTML string `json:"HTML"`
	// Headers are the raw headers (from /api/v1/message/{ID}/headers).
	Headers map[string][]string `json:"-"`
}

func (s *Server) get(ctx context.Context, path string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.APIURL()+path, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("mailpit GET %s: %s", path, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// Messages lists the received messages, newest first (at most 500).
func (s *Server) Messages(ctx context.Context) ([]Summary, error) {
	var out struct {
		Messages []Summary `json:"messages"`
	}
	err := s.get(ctx, "/api/v1/messages?limit=500", &out)
	return out.Messages, err
}

// To lists the messages received for address, oldest first.
func (s *Server) To(ctx context.Context, address string) ([]Summary, error) {
	all, err := s.Messages(ctx)
	if err != nil {
		return nil, err
	}
	var out []Summary
	for i := len(all) - 1; i >= 0; i-- {
		for _, a := range all[i].To {
			if strings.EqualFold(a.Address, address) {
				out = append(out, all[i])
				break
			}
		}
	}
	return out, nil
}

// Message reads one message with its bodies and headers.
func (s *Server) Message(ctx context.Context, id string) (*Message, error) {
	var m Message
	if err := s.get(ctx, "/api/v1/message/"+url.PathEscape(id), &m); err != nil {
		return nil, err
	}
	if err := s.get(ctx, "/api/v1/message/"+url.PathEscape(id)+"/headers", &m.Headers); err != nil {
		return nil, err
	}
	return &m, nil
}

// WaitFor waits until at least n messages for address arrived (or ctx
// ends) and returns the n-th (1-based, oldest first) in full.
func (s *Server) WaitFor(ctx context.Context, address string, n int) (*Message, error) {
	for {
		msgs, err := s.To(ctx, address)
		if err == nil && len(msgs) >= n {
			return s.Message(ctx, msgs[n-1].ID)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("mailpit: %d message(s) for %s did not arrive (%d did; last error %v): %w", n, address, len(msgs), err, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// freePort is a loopback port nothing listens on now. Another process may
// take it before Mailpit does; start then says the port is taken.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("mailpit: a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
