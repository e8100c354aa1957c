package cimd

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
)

// ssrfServer serves a valid document for any client_id on testHost, so that
// a fetcher that failed to refuse an address would succeed against it.
func ssrfServer(t *testing.T) *testServer {
	var srv *testServer
	srv = newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(mustJSON(t, validDoc(srv.url(testHost, r.URL.Path))))
	}))
	return srv
}

func TestFetchRefusesNonPublicAddresses(t *testing.T) {
	srv := ssrfServer(t)
	clientID := srv.url(testHost, "/client.json")
	tests := []struct {
		name          string
		answer        []string
		allowLoopback bool
	}{
		{"loopback without the test switch", []string{"127.0.0.1"}, false},
		{"IPv6 loopback", []string{"::1"}, false},
		{"IPv4-mapped loopback", []string{"::ffff:127.0.0.1"}, false},
		{"private", []string{"10.0.0.1"}, false},
		{"private 192.168", []string{"192.168.0.10"}, false},
		{"cloud metadata", []string{"169.254.169.254"}, false},
		{"CGNAT", []string{"100.64.0.1"}, false},
		{"ULA", []string{"fd00::1"}, false},
		{"IPv4-mapped private", []string{"::ffff:10.0.0.1"}, false},
		{"NAT64 of private", []string{"64:ff9b::a00:1"}, false},
		{"6to4 of private", []string{"2002:a00:1::1"}, false},
		{"unspecified", []string{"0.0.0.0"}, false},
		{"multicast", []string{"224.0.0.1"}, false},
		{"public then private", []string{"93.184.216.34", "10.0.0.1"}, false},
		{"private then public", []string{"10.0.0.1", "93.184.216.34"}, false},
		{"public and loopback", []string{"93.184.216.34", "127.0.0.1"}, false},
		// The test switch admits loopback only.
		{"private with the test switch", []string{"10.0.0.1"}, true},
		{"cloud metadata with the test switch", []string{"169.254.169.254"}, true},
		{"ULA with the test switch", []string{"fd00::1"}, true},
		{"loopback and private with the test switch", []string{"127.0.0.1", "10.0.0.1"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := srv.hits.Load()
			e := newEnv(t, Options{AllowLoopbackForTests: tc.allowLoopback})
			e.dns.set(testHost, tc.answer)
			dials := recordDials(e.f)

			_, err := e.f.Fetch(t.Context(), clientID)
			er := wantError(t, err, "resolves to a non-public address")
			for _, a := range tc.answer {
				if strings.Contains(er.Description, a) {
					t.Errorf("Description %q reveals the address %s", er.Description, a)
				}
			}
			if d := dials.get(); len(d) != 0 {
				t.Errorf("connected to %v", d)
			}
			if n := srv.hits.Load() - before; n != 0 {
				t.Errorf("the server on 127.0.0.1 got %d requests", n)
			}
			if n := e.dns.count(); n != 1 {
				t.Errorf("%d lookups, want 1", n)
			}
			if n := e.cache.setCount(); n != 0 {
				t.Errorf("%d cache writes", n)
			}
			// The log has the real reason, for the operator.
			logs := e.logs.String()
			if !strings.Contains(logs, clientID) || !strings.Contains(logs, tc.answer[len(tc.answer)-1]) {
				t.Errorf("log lacks the URL or the resolved addresses:\n%s", logs)
			}
		})
	}
}

// TestFetchLoopbackWithTestSwitch is the control of the test above: the
// same server, reached through 127.0.0.1 with the switch on, answers.
func TestFetchLoopbackWithTestSwitch(t *testing.T) {
	srv := ssrfServer(t)
	e := newEnv(t, Options{AllowLoopbackForTests: true})
	if _, err := e.f.Fetch(t.Context(), srv.url(testHost, "/client.json")); err != nil {
		t.Fatal(err)
	}
	if srv.hits.Load() != 1 {
		t.Fatal("server not reached")
	}
}

// TestFetchIPLiteralHosts: literal addresses are vetted like resolved ones,
// without a lookup.
func TestFetchIPLiteralHosts(t *testing.T) {
	srv := ssrfServer(t)
	tests := []struct {
		name          string
		clientID      string
		allowLoopback bool
	}{
		{"loopback", "https://127.0.0.1:" + srv.port + "/client.json", false},
		{"IPv4-mapped loopback", "https://[::ffff:127.0.0.1]:" + srv.port + "/client.json", false},
		{"cloud metadata", "https://169.254.169.254/latest/meta-data/client.json", true},
		{"private", "https://10.0.0.1:" + srv.port + "/client.json", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, Options{AllowLoopbackForTests: tc.allowLoopback})
			dials := recordDials(e.f)
			_, err := e.f.Fetch(t.Context(), tc.clientID)
			wantError(t, err, "resolves to a non-public address")
			if d := dials.get(); len(d) != 0 {
				t.Errorf("connected to %v", d)
			}
			if e.dns.count() != 0 {
				t.Error("an IP literal was looked up")
			}
		})
	}
	if srv.hits.Load() != 0 {
		t.Errorf("the server got %d requests", srv.hits.Load())
	}
}

// TestFetchDNSRebinding: a host that answers a public address to the check
// and 127.0.0.1 to a second lookup. The fetcher looks up once and connects
// to the vetted address; here that address cannot be reached (the dial to
// it fails, as an unroutable one would), so the fetch fails, and the server
// on 127.0.0.1 sees nothing.
func TestFetchDNSRebinding(t *testing.T) {
	srv := ssrfServer(t)
	e := newEnv(t, Options{})
	e.dns.set(testHost, []string{"93.184.216.34"}, []string{"127.0.0.1"})
	dials := &dialLog{}
	e.f.dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.add(addr)
		if strings.HasPrefix(addr, "93.184.216.34:") {
			return nil, errors.New("connect: network is unreachable (test)")
		}
		// Anything else would be a connection the check did not approve;
		// make it for real, so that the server would see it.
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}

	_, err := e.f.Fetch(t.Context(), srv.url(testHost, "/client.json"))
	wantError(t, err, "could not be reached")
	if n := e.dns.count(); n != 1 {
		t.Errorf("%d lookups, want exactly 1", n)
	}
	if d := dials.get(); len(d) != 1 || d[0] != "93.184.216.34:"+srv.port {
		t.Errorf("connected to %v, want only the vetted 93.184.216.34:%s", d, srv.port)
	}
	if n := srv.hits.Load(); n != 0 {
		t.Errorf("the server on 127.0.0.1 got %d requests", n)
	}
}

// TestDefaultDialRefusesAtSocket: the dialer's own Control refuses
// non-public addresses, whatever the code above it asks for.
func TestDefaultDialRefusesAtSocket(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	var accepted atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			_ = c.Close()
		}
	}()

	e := newEnv(t, Options{})
	if c, err := e.f.defaultDial(t.Context(), "tcp", ln.Addr().String()); err == nil {
		_ = c.Close()
		t.Fatal("dialled 127.0.0.1 without the test switch")
	}
	if _, err := e.f.defaultDial(t.Context(), "tcp", "10.0.0.1:443"); err == nil || !strings.Contains(err.Error(), "refusing") {
		t.Fatalf("dial of 10.0.0.1: %v, want refused before connecting", err)
	}
	if accepted.Load() != 0 {
		t.Fatal("the listener accepted a connection")
	}

	// Control: with the switch, loopback connects.
	e = newEnv(t, Options{AllowLoopbackForTests: true})
	c, err := e.f.defaultDial(t.Context(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	_ = c.Close()
}

func TestFetchUnresolvableHost(t *testing.T) {
	e := newEnv(t, Options{AllowLoopbackForTests: true})
	e.dns.set("empty.example.test", []string{})
	for _, host := range []string{"nxdomain.example.test", "empty.example.test"} {
		_, err := e.f.Fetch(t.Context(), "https://"+host+"/client.json")
		wantError(t, err, "could not be resolved")
	}
}
