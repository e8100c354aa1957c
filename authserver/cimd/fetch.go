package cimd

import (
	"cmp"
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// Defaults of Options.
const (
	DefaultConnectTimeout = 3 * time.Second
	DefaultTimeout        = 5 * time.Second
	// DefaultMaxBytes is the size cap of a document. Real documents exceed
	// 5 KB (DESIGN §6), so the draft's suggested 5 KB would refuse them.
	DefaultMaxBytes = 16 << 10
)

// Bounds of how long a fetched document is cached, whatever its
// Cache-Control says: at least MinCacheTTL so that a popular client cannot
// make us fetch on every authorization, at most MaxCacheTTL so that a
// client's changes (a removed redirect URI) reach us within a day.
const (
	MinCacheTTL = 5 * time.Minute
	MaxCacheTTL = 24 * time.Hour
)

// UserAgent is sent with every fetch, so that a document's host can tell
// who is asking.
const UserAgent = "Lectern-CIMD/1 (+https://github.com/lectern/lectern)"

// Options configures New. Zero values give the defaults.
type Options struct {
	// Cache keeps valid documents platform-wide. Required.
	Cache storage.Cache
	// Logger gets a warning per failed fetch, with the URL and the real
	// reason (resolved addresses included), never the response body.
	// Default: discard.
	Logger *slog.Logger
	// Now is the clock of the log's durations. Default time.Now.
	Now func() time.Time
	// ConnectTimeout bounds DNS resolution, the TCP connection and the TLS
	// handshake together. Default DefaultConnectTimeout.
	ConnectTimeout time.Duration
	// Timeout bounds a whole fetch, reading the body included. Default
	// DefaultTimeout.
	Timeout time.Duration
	// MaxBytes is the largest document accepted. Default DefaultMaxBytes.
	MaxBytes int64
	// LookupIP resolves a document's host. Default
	// net.DefaultResolver.LookupNetIP(ctx, "ip", host).
	LookupIP func(ctx context.Context, host string) ([]netip.Addr, error)
	// RootCAs verifies the servers' certificates. Default (nil): the system
	// roots.
	RootCAs *x509.CertPool
	// AllowLoopbackForTests is for tests only and must stay false in
	// production: it lets the fetcher connect to loopback addresses
	// (127.0.0.0/8, ::1), so that tests can fetch from an httptest server.
	// It admits loopback and nothing else: private, link-local (cloud
	// metadata) and every other non-public range stay refused.
	AllowLoopbackForTests bool
}

// Fetcher fetches, validates and caches Client ID Metadata Documents. It is
// safe for concurrent use.
type Fetcher struct {
	cache          storage.Cache
	log            *slog.Logger
	now            func() time.Time
	connectTimeout time.Duration
	timeout        time.Duration
	maxBytes       int64
	lookupIP       func(ctx context.Context, host string) ([]netip.Addr, error)
	allowLoopback  bool
	client         *http.Client
	// dial makes the TCP connection to an address the dialer has vetted;
	// tests replace it to see where a fetch would connect.
	dial   func(ctx context.Context, network, addr string) (net.Conn, error)
	rootCA *x509.CertPool
	flight singleflight.Group
}

// New returns a Fetcher. It panics when Options.Cache is nil: that is a
// wiring mistake, and fetching without a cache would let clients make us
// fetch on every authorization.
func New(o Options) *Fetcher {
	if o.Cache == nil {
		panic("cimd: New needs Options.Cache")
	}
	f := &Fetcher{
		cache:          o.Cache,
		log:            o.Logger,
		now:            o.Now,
		connectTimeout: o.ConnectTimeout,
		timeout:        o.Timeout,
		maxBytes:       o.MaxBytes,
		lookupIP:       o.LookupIP,
		allowLoopback:  o.AllowLoopbackForTests,
		rootCA:         o.RootCAs,
	}
	if f.log == nil {
		f.log = slog.New(slog.DiscardHandler)
	}
	if f.now == nil {
		f.now = time.Now
	}
	if f.connectTimeout <= 0 {
		f.connectTimeout = DefaultConnectTimeout
	}
	if f.timeout <= 0 {
		f.timeout = DefaultTimeout
	}
	if f.maxBytes <= 0 {
		f.maxBytes = DefaultMaxBytes
	}
	if f.lookupIP == nil {
		f.lookupIP = defaultLookupIP
	}
	f.dial = f.defaultDial
	f.client = f.newClient()
	return f
}

// platformSite is the site of platform-wide cache entries: a document is
// the same for every site that accepts it.
const platformSite tenant.ID = 0

// cacheKey is where the document of clientID is cached; hashed, because a
// URL may be 2 KB of anything.
func cacheKey(clientID string) string {
	sum := sha256.Sum256([]byte(clientID))
	return storage.CacheKey(platformSite, "cimd", hex.EncodeToString(sum[:]))
}

// Fetch returns the validated document of clientID, from the cache or
// fetched. Concurrent fetches of one URL share one request. Errors are
// *Error; their Description may be shown to the person authorizing.
func (f *Fetcher) Fetch(ctx context.Context, clientID string) (*Document, error) {
	return f.FetchAdmitted(ctx, clientID, nil)
}

// FetchAdmitted is Fetch, but when the document is not in the cache it
// first asks admit (if not nil) whether the caller may make the server
// fetch it: the URL is the caller's choice and may change on every
// request, so the cache alone does not bound the fetches a stranger can
// cause. An error from admit is returned as it is, and nothing is fetched.
func (f *Fetcher) FetchAdmitted(ctx context.Context, clientID string, admit func(context.Context) error) (*Document, error) {
	u, err := ValidateClientIDURL(clientID)
	if err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, callerGone(ctx)
	}
	key := cacheKey(clientID)
	raw, err := f.cache.Get(ctx, key)
	switch {
	case err == nil:
		doc, err := parseDocument(clientID, u, raw)
		if err == nil {
			return doc, nil
		}
		// Stored under rules that have since tightened: fetch it again.
		f.log.Info("cimd: cached document no longer valid, fetching again", "client_id", clientID, "error", err)
	case !errors.Is(err, storage.ErrCacheMiss):
		// The cache being down should not lock CIMD clients out; the fetch
		// itself is bounded.
		f.log.Warn("cimd: reading the document cache failed", "client_id", clientID, "error", err)
	}

	if admit != nil {
		if err := admit(ctx); err != nil {
			return nil, err
		}
	}
	// The shared fetch must not die with whichever caller started it, so it
	// runs on its own deadline; each caller still waits only as long as its
	// own context allows.
	ch := f.flight.DoChan(key, func() (any, error) {
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), f.timeout)
		defer cancel()
		return f.fetchAndCache(fctx, clientID, u, key)
	})
	select {
	case <-ctx.Done():
		return nil, callerGone(ctx)
	case r := <-ch:
		if r.Err != nil {
			return nil, r.Err
		}
		return r.Val.(*Document).clone(), nil
	}
}

func (f *Fetcher) fetchAndCache(ctx context.Context, clientID string, u *url.URL, key string) (*Document, error) {
	start := f.now()
	tr := &trace{}
	doc, raw, ttl, err := f.fetch(withTrace(ctx, tr), clientID, u)
	if err != nil {
		resolved, dialed := tr.get()
		f.log.Warn("cimd: fetching a client metadata document failed",
			"client_id", clientID, "error", err, "resolved", resolved, "dialed", dialed,
			"elapsed", f.now().Sub(start))
		return nil, err
	}
	if err := f.cache.Set(ctx, key, raw, ttl); err != nil {
		f.log.Warn("cimd: caching a client metadata document failed", "client_id", clientID, "error", err)
	}
	return doc, nil
}

// fetch GETs the document and validates it; raw is the body to cache, ttl
// how long.
func (f *Fetcher) fetch(ctx context.Context, clientID string, u *url.URL) (doc *Document, raw []byte, ttl time.Duration, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, clientID, nil)
	if err != nil {
		return nil, nil, 0, newError(err, "The client_id URL is not a valid URL.")
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, nil, 0, requestError(ctx, err)
	}
	defer resp.Body.Close()
	// The deadline and an answer can arrive together (the server may answer
	// because our cancellation reached it): an answer after the deadline is
	// a timeout, whatever it says.
	if ctx.Err() != nil {
		return nil, nil, 0, newError(ctx.Err(), "The client metadata document's server did not answer in time.")
	}

	switch {
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return nil, nil, 0, newError(errors.New(resp.Status+", Location: "+resp.Header.Get("Location")),
			"The client metadata document's server answered with a redirect, which is not followed.")
	case resp.StatusCode != http.StatusOK:
		return nil, nil, 0, newError(errors.New(resp.Status),
			"The client metadata document's server answered with HTTP status "+strconv.Itoa(resp.StatusCode)+" instead of 200.")
	}
	if ct := resp.Header.Get("Content-Type"); !jsonMediaType(ct) {
		return nil, nil, 0, newError(errors.New("Content-Type: "+strconv.Quote(ct)),
			"The client metadata document is not served as application/json.")
	}
	tooLarge := newError(nil, "The client metadata document is larger than "+sizeString(f.maxBytes)+".")
	if resp.ContentLength > f.maxBytes {
		return nil, nil, 0, tooLarge
	}
	raw, err = io.ReadAll(io.LimitReader(resp.Body, f.maxBytes+1))
	// Once the deadline has passed, a read may end without an error on a
	// truncated body, so the deadline is checked whatever the read said.
	if ctx.Err() != nil {
		return nil, nil, 0, newError(cmp.Or(err, ctx.Err()), "The client metadata document's server did not answer in time.")
	}
	if err != nil {
		return nil, nil, 0, newError(err, "The client metadata document could not be read completely.")
	}
	if int64(len(raw)) > f.maxBytes {
		return nil, nil, 0, tooLarge
	}
	doc, err = parseDocument(clientID, u, raw)
	if err != nil {
		return nil, nil, 0, err
	}
	return doc, raw, cacheTTL(resp.Header), nil
}

// callerGone is the error of a caller whose context ended while it waited.
func callerGone(ctx context.Context) *Error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return newError(ctx.Err(), "The client metadata document could not be fetched in time.")
	}
	return newError(ctx.Err(), "Fetching the client metadata document was cancelled.")
}

// requestError turns an error of http.Client.Do into an *Error.
func requestError(ctx context.Context, err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e // the dialer's, already described
	}
	if ctx.Err() != nil {
		return newError(err, "The client metadata document's server did not answer in time.")
	}
	return newError(err, "The client metadata document could not be fetched.")
}

// jsonMediaType reports whether ct is application/json or a structured
// syntax suffix type such as application/ld+json, with any parameters.
func jsonMediaType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil && !errors.Is(err, mime.ErrInvalidMediaParameter) {
		return false
	}
	return mt == "application/json" ||
		strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")
}

func sizeString(n int64) string {
	if n%1024 == 0 {
		return strconv.FormatInt(n/1024, 10) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// cacheTTL is how long to cache a document served with header h: its
// Cache-Control max-age less its Age (RFC 9111 §4.2), clamped to
// [MinCacheTTL, MaxCacheTTL]. no-store, no-cache or no max-age give
// MinCacheTTL: even a document that asks not to be cached is kept that long,
// so that a client cannot make us fetch on every authorization.
func cacheTTL(h http.Header) time.Duration {
	maxAge := time.Duration(-1)
	for _, line := range h.Values("Cache-Control") {
		for d := range strings.SplitSeq(line, ",") {
			name, val, _ := strings.Cut(d, "=")
			switch strings.ToLower(strings.TrimSpace(name)) {
			case "no-store", "no-cache":
				return MinCacheTTL
			case "max-age":
				if s, ok := deltaSeconds(val); ok && maxAge < 0 {
					maxAge = s
				}
			}
		}
	}
	if maxAge < 0 {
		return MinCacheTTL
	}
	if age, ok := deltaSeconds(h.Get("Age")); ok {
		maxAge -= age
	}
	return min(max(maxAge, MinCacheTTL), MaxCacheTTL)
}

// deltaSeconds parses an RFC 9111 delta-seconds value (quotes tolerated).
// Values too large for an int saturate, as §1.2.2 asks.
func deltaSeconds(s string) (time.Duration, bool) {
	s = strings.Trim(strings.TrimSpace(s), `"`)
	if s == "" || strings.Trim(s, "0123456789") != "" {
		return 0, false
	}
	if len(s) > 9 {
		return MaxCacheTTL * 1000, true // far beyond any bound we apply
	}
	n, _ := strconv.Atoi(s)
	return time.Duration(n) * time.Second, true
}
