package integration

import (
	"bufio"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// Slowloris: a client that trickles its request headers, one line a
// second, never finishing them, is cut off by the server's read-header
// timeout (10 s) instead of holding its connection for as long as it
// likes; other requests are served meanwhile. It runs in parallel with the
// other tests: it waits for the server's timeout.
func TestSlowHeadersAreCutOff(t *testing.T) {
	t.Parallel()
	ts := startServer(t, backend{name: "embedded"}, nil)
	conn, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	if _, err := io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: localhost\r\n"); err != nil {
		t.Fatal(err)
	}
	ended := make(chan string, 1)
	go func() {
		_ = conn.SetReadDeadline(time.Now().Add(40 * time.Second))
		answer, _ := io.ReadAll(bufio.NewReader(conn)) // until the server closes (or the deadline)
		ended <- string(answer)
	}()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case answer := <-ended:
			took := time.Since(start)
			if strings.Contains(answer, "200 OK") || took > 20*time.Second {
				t.Fatalf("the trickling request was answered %q after %s; want the connection closed by the read-header timeout", answer, took)
			}
			return
		case <-tick.C:
			// Keep trickling, as slowloris does, so that only the
			// deadline for the whole header can end it.
			_, _ = io.WriteString(conn, "X-Trickle: "+strings.Repeat("a", i%7+1)+"\r\n")
			if i == 2 {
				if code, _, _ := ts.get(t, ts.academy(), "/healthz"); code != 200 {
					t.Errorf("another request while one trickles: %d", code)
				}
			}
		}
	}
}
