package cimd

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"errors"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lectern/lectern/internal/logtest"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/storage/cache"
	"github.com/lectern/lectern/storage/storagetest"
)

// The test certificate covers these names (and 127.0.0.1, ::1); tests map
// them to addresses of their choosing through a fake LookupIP, so that the
// fetcher sees a public-looking host, as in production, and verifies the
// certificate for it.
const (
	testHost  = "client.example.test"
	otherHost = "other.example.test"
	// wrongHost resolves, but the certificate does not cover it.
	wrongHost = "wrong.example.net"
)

type testCert struct {
	cert tls.Certificate
	pool *x509.CertPool
}

var certOnce = sync.OnceValues(func() (*testCert, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "cimd test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:              []string{testHost, otherHost},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return &testCert{cert: tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool: pool}, nil
})

func mustCert(t testing.TB) *testCert {
	t.Helper()
	c, err := certOnce()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// testServer is an https server on 127.0.0.1 that counts the requests it
// gets.
type testServer struct {
	*httptest.Server
	hits atomic.Int64
	port string
}

func newServer(t testing.TB, h http.Handler) *testServer {
	t.Helper()
	s := &testServer{}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		h.ServeHTTP(w, r)
	}))
	s.Server.TLS = &tls.Config{Certificates: []tls.Certificate{mustCert(t).cert}}
	// Handshakes the fetcher refuses are expected here.
	s.Server.Config.ErrorLog = log.New(io.Discard, "", 0)
	s.StartTLS()
	t.Cleanup(s.Close)
	_, s.port, _ = net.SplitHostPort(s.Listener.Addr().String())
	return s
}

// url is the https URL of path on host at the server's port.
func (s *testServer) url(host, path string) string {
	return "https://" + host + ":" + s.port + path
}

// fakeDNS is a LookupIP that answers from a table and counts lookups. A
// host with several answers gets them in turn (the last one repeats), as a
// rebinding DNS server would give them.
type fakeDNS struct {
	mu      sync.Mutex
	answers map[string][][]netip.Addr
	lookups []string
}

func newDNS() *fakeDNS { return &fakeDNS{answers: map[string][][]netip.Addr{}} }

// set makes host answer addrs (each a list of addresses), in turn.
func (d *fakeDNS) set(host string, answers ...[]string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var as [][]netip.Addr
	for _, a := range answers {
		var addrs []netip.Addr
		for _, s := range a {
			addrs = append(addrs, netip.MustParseAddr(s))
		}
		as = append(as, addrs)
	}
	d.answers[host] = as
}

func (d *fakeDNS) LookupIP(_ context.Context, host string) ([]netip.Addr, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.lookups = append(d.lookups, host)
	as := d.answers[host]
	if len(as) == 0 {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	a := as[0]
	if len(as) > 1 {
		d.answers[host] = as[1:]
	}
	return a, nil
}

func (d *fakeDNS) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.lookups)
}

// dialLog records the addresses the fetcher connects to.
type dialLog struct {
	mu    sync.Mutex
	addrs []string
}

func (l *dialLog) add(a string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.addrs = append(l.addrs, a)
}

func (l *dialLog) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.addrs...)
}

// recordDials makes f record every TCP connection it makes, then make it as
// before.
func recordDials(f *Fetcher) *dialLog {
	l := &dialLog{}
	orig := f.dial
	f.dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		l.add(addr)
		return orig(ctx, network, addr)
	}
	return l
}

// recordingCache wraps a cache and records what was written, so tests can
// see TTLs and clean Redis up.
type recordingCache struct {
	storage.Cache
	mu   sync.Mutex
	sets map[string]time.Duration
	gets atomic.Int64
}

func (c *recordingCache) Get(ctx context.Context, key string) ([]byte, error) {
	c.gets.Add(1)
	return c.Cache.Get(ctx, key)
}

func (c *recordingCache) Set(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	c.mu.Lock()
	c.sets[key] = ttl
	c.mu.Unlock()
	return c.Cache.Set(ctx, key, value, ttl)
}

// ttl returns the TTL last written for key, and whether one was.
func (c *recordingCache) ttl(key string) (time.Duration, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d, ok := c.sets[key]
	return d, ok
}

func (c *recordingCache) setCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.sets)
}

func record(c storage.Cache) *recordingCache {
	return &recordingCache{Cache: c, sets: map[string]time.Duration{}}
}

// backend names a cache backend and opens a fresh one; now is the memory
// cache's clock (nil: real time).
type backend struct {
	name string
	open func(t *testing.T, now func() time.Time) *recordingCache
}

// backends are the caches the cache tests run on: memory always, Redis
// when reachable (required with LECTERN_REQUIRE_SERVICES=1).
var backends = []backend{
	{"memory", func(t *testing.T, now func() time.Time) *recordingCache {
		m := cache.NewMemory(&cache.MemoryOptions{Now: now})
		t.Cleanup(func() { _ = m.Close() })
		return record(m)
	}},
	{"redis", func(t *testing.T, _ func() time.Time) *recordingCache {
		url := storagetest.RedisURL(t)
		r, err := cache.NewRedis(t.Context(), url, &cache.RedisOptions{Prefix: "lectern-test:cimd:" + rand.Text() + ":"})
		if err != nil {
			t.Fatal(err)
		}
		rc := record(r)
		t.Cleanup(func() {
			rc.mu.Lock()
			keys := make([]string, 0, len(rc.sets))
			for k := range rc.sets {
				keys = append(keys, k)
			}
			rc.mu.Unlock()
			if err := r.Delete(context.Background(), keys...); err != nil {
				t.Errorf("removing test keys: %v", err)
			}
			_ = r.Close()
		})
		return rc
	}},
}

// memCache returns a fresh recording memory cache.
func memCache(t *testing.T) *recordingCache { return backends[0].open(t, nil) }

// env is a fetcher wired for tests: the test certificate trusted, a fake
// DNS, loopback allowed (unless the test says otherwise), logs captured.
type env struct {
	f     *Fetcher
	dns   *fakeDNS
	cache *recordingCache
	logs  *logtest.Buffer
}

// newEnv builds a fetcher from o, filling in what o leaves empty: a memory
// cache, the test roots, a fake DNS mapping testHost and otherHost to
// 127.0.0.1, and a logger writing both to the test output and to env.logs.
func newEnv(t *testing.T, o Options) *env {
	t.Helper()
	logger, logs := logtest.New(t)
	e := &env{dns: newDNS(), logs: logs}
	e.dns.set(testHost, []string{"127.0.0.1"})
	e.dns.set(otherHost, []string{"127.0.0.1"})
	e.dns.set(wrongHost, []string{"127.0.0.1"})
	if o.Cache == nil {
		o.Cache = memCache(t)
	}
	if rc, ok := o.Cache.(*recordingCache); ok {
		e.cache = rc
	}
	if o.RootCAs == nil {
		o.RootCAs = mustCert(t).pool
	}
	if o.LookupIP == nil {
		o.LookupIP = e.dns.LookupIP
	}
	if o.Logger == nil {
		o.Logger = logger
	}
	e.f = New(o)
	return e
}

// validDoc is a minimal valid document for clientID, as a map tests can
// change before serving.
func validDoc(clientID string) map[string]any {
	host := strings.TrimPrefix(clientID, "https://")
	host = host[:strings.IndexByte(host, '/')]
	return map[string]any{
		"client_id":     clientID,
		"client_name":   "Example Agent",
		"redirect_uris": []string{"https://" + host + "/callback", "http://127.0.0.1/callback"},
	}
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// wantError asserts that err is an *Error whose Description contains want,
// and returns it.
func wantError(t *testing.T, err error, want string) *Error {
	t.Helper()
	if err == nil {
		t.Fatalf("err = nil, want an *Error saying %q", want)
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v (%T), want an *Error", err, err)
	}
	if !strings.Contains(e.Description, want) {
		t.Fatalf("Description = %q, want it to contain %q (err: %v)", e.Description, want, err)
	}
	return e
}
