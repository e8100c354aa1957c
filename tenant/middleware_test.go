package tenant

import (
	"crypto/tls"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
)

// middleware is Admit as an http middleware: the site in the request's
// context, or the request answered.
func middleware(r *Resolver, opts MiddlewareOptions) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if ctx, ok := r.Admit(req.Context(), w, req, &opts); ok {
				next.ServeHTTP(w, req.WithContext(ctx))
			}
		})
	}
}

func serve(t *testing.T, r *Resolver, proxies []netip.Prefix, req *http.Request) (*httptest.ResponseRecorder, *Site) {
	t.Helper()
	var got *Site
	h := middleware(r, MiddlewareOptions{TrustedProxies: proxies, Logger: slog.New(slog.DiscardHandler)})(
		http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			got, _ = FromContext(req.Context())
			w.WriteHeader(http.StatusNoContent)
		}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec, got
}

func jsonError(t *testing.T, rec *httptest.ResponseRecorder) string {
	t.Helper()
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q; want application/json", ct)
	}
	var body struct {
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Error == "" || body.Description == "" {
		t.Fatalf("body %q is not an RFC 6749 error: %v", rec.Body.String(), err)
	}
	return body.Error
}

func TestMiddleware(t *testing.T) {
	l := &mapLookup{sites: map[string]*Site{
		"a.test":         {ID: 1, Slug: "a"},
		"localhost:8080": {ID: 2, Slug: "local"},
	}}
	r := NewResolver(l, nil)
	proxy := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	tests := []struct {
		name       string
		host       string
		remote     string
		fwdHost    string
		fwdProto   string
		tls        bool
		wantStatus int
		wantSite   string
		wantError  string
	}{
		{name: "known host", host: "a.test", wantStatus: 204, wantSite: "a"},
		{name: "known host with port", host: "localhost:8080", wantStatus: 204, wantSite: "local"},
		{name: "case folded", host: "A.TEST", wantStatus: 204, wantSite: "a"},
		{name: "default port on https", host: "a.test:443", tls: true, wantStatus: 204, wantSite: "a"},
		{name: "unknown host", host: "unknown.test", wantStatus: 404, wantError: "not_found"},
		{name: "trailing dot", host: "a.test.", wantStatus: 404, wantError: "not_found"},
		{name: "empty host", host: "", wantStatus: 400, wantError: "invalid_request"},
		{name: "user info", host: "evil@a.test", wantStatus: 400, wantError: "invalid_request"},
		{name: "unicode", host: "ä.test", wantStatus: 400, wantError: "invalid_request"},
		{name: "overlong", host: strings.Repeat("a", 300), wantStatus: 400, wantError: "invalid_request"},
		{name: "port out of range", host: "a.test:70000", wantStatus: 400, wantError: "invalid_request"},
		{name: "forwarded host from untrusted peer ignored", host: "unknown.test", remote: "192.0.2.1:1234", fwdHost: "a.test", wantStatus: 404, wantError: "not_found"},
		{name: "forwarded host from trusted proxy", host: "internal:8080", remote: "10.1.2.3:1234", fwdHost: "a.test", fwdProto: "https", wantStatus: 204, wantSite: "a"},
		{name: "forwarded: last value wins", host: "internal", remote: "10.1.2.3:1234", fwdHost: "evil.test, a.test", wantStatus: 204, wantSite: "a"},
		{name: "forwarded proto sets default port", host: "x", remote: "10.0.0.1:1", fwdHost: "a.test:443", fwdProto: "https", wantStatus: 204, wantSite: "a"},
		{name: "malformed forwarded host", host: "a.test", remote: "10.0.0.1:1", fwdHost: "a b", wantStatus: 400, wantError: "invalid_request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/", nil)
			req.Host = tt.host
			if tt.remote != "" {
				req.RemoteAddr = tt.remote
			}
			if tt.fwdHost != "" {
				req.Header.Set("X-Forwarded-Host", tt.fwdHost)
			}
			if tt.fwdProto != "" {
				req.Header.Set("X-Forwarded-Proto", tt.fwdProto)
			}
			req.TLS = nil
			if tt.tls {
				req.TLS = &tls.ConnectionState{}
			}
			rec, site := serve(t, r, proxy, req)
			if rec.Code != tt.wantStatus {
				t.Fatalf("status %d; want %d (body %s)", rec.Code, tt.wantStatus, rec.Body)
			}
			if tt.wantError != "" {
				if got := jsonError(t, rec); got != tt.wantError {
					t.Fatalf("error %q; want %q", got, tt.wantError)
				}
				if site != nil {
					t.Fatal("the handler ran for a refused host")
				}
				// Answered before the site's handlers (and their security
				// headers) run: the refusal carries its own.
				if got := rec.Header().Get("X-Content-Type-Options"); got != "nosniff" {
					t.Errorf("X-Content-Type-Options %q; want nosniff", got)
				}
				if got := rec.Header().Get("Referrer-Policy"); got != "no-referrer" {
					t.Errorf("Referrer-Policy %q; want no-referrer", got)
				}
				return
			}
			if site == nil || site.Slug != tt.wantSite {
				t.Fatalf("site %+v; want %q", site, tt.wantSite)
			}
		})
	}
}

func TestMiddlewareStorageOutage(t *testing.T) {
	l := &mapLookup{sites: map[string]*Site{}, err: errors.New("connection refused")}
	r := NewResolver(l, nil)
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.Host = "a.test"
	rec, _ := serve(t, r, nil, req)
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" {
		t.Fatalf("status %d, Retry-After %q; want 503 with Retry-After", rec.Code, rec.Header().Get("Retry-After"))
	}
	if got := jsonError(t, rec); got != "temporarily_unavailable" {
		t.Fatalf("error %q", got)
	}
	if rec.Header().Get("X-Content-Type-Options") != "nosniff" || rec.Header().Get("Referrer-Policy") != "no-referrer" {
		t.Fatalf("security headers missing: %v", rec.Header())
	}
}

func TestParseTrustedProxies(t *testing.T) {
	ps, err := ParseTrustedProxies(" 10.0.0.0/8, 192.0.2.7 ,::1")
	if err != nil || len(ps) != 3 {
		t.Fatalf("ParseTrustedProxies = %v, %v", ps, err)
	}
	if !trusted("192.0.2.7:55", ps) || trusted("192.0.2.8:55", ps) || !trusted("[::1]:9", ps) || !trusted("10.9.9.9:1", ps) {
		t.Fatal("trusted() disagrees with the parsed list")
	}
	if _, err := ParseTrustedProxies("10.0.0.0/33"); err == nil {
		t.Fatal("accepted a bad prefix")
	}
	if _, err := ParseTrustedProxies("not-an-ip"); err == nil {
		t.Fatal("accepted a bad address")
	}
}

func TestClientIP(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1:5000":      "127.0.0.1",
		"[::1]:443":           "::1",
		"[2001:db8::7]:65535": "2001:db8::7",
		"192.0.2.9":           "192.0.2.9",
		"[2001:db8::8]":       "2001:db8::8",
		"":                    "",
	} {
		r := &http.Request{RemoteAddr: addr}
		if got := ClientIP(r); got != want {
			t.Errorf("ClientIP(%q) = %q; want %q", addr, got, want)
		}
	}
}

// Behind a trusted proxy the client's address is the right-most
// X-Forwarded-For value (the one the proxy appended); from anyone else
// the header is ignored, so a client cannot pick the address its per-IP
// limits are counted under.
func TestClientIPBehindTrustedProxy(t *testing.T) {
	r := NewResolver(&mapLookup{sites: map[string]*Site{"a.test": {ID: 1, Slug: "a"}}}, nil)
	proxy := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	for _, tt := range []struct {
		name, remote, xff, want string
	}{
		{"trusted proxy", "10.1.2.3:4000", "198.51.100.7", "198.51.100.7"},
		{"trusted proxy, spoofed values before", "10.1.2.3:4000", "203.0.113.1, 198.51.100.7", "198.51.100.7"},
		{"trusted proxy, IPv6", "10.1.2.3:4000", "2001:db8::9", "2001:db8::9"},
		{"trusted proxy, IPv4-mapped", "10.1.2.3:4000", "::ffff:198.51.100.8", "198.51.100.8"},
		{"trusted proxy, garbage", "10.1.2.3:4000", "not-an-ip", "10.1.2.3"},
		{"untrusted peer", "192.0.2.1:4000", "198.51.100.7", "192.0.2.1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got string
			h := middleware(r, MiddlewareOptions{TrustedProxies: proxy, Logger: slog.New(slog.DiscardHandler)})(
				http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) { got = ClientIP(req) }))
			req := httptest.NewRequest(http.MethodGet, "/", nil)
			req.Host, req.RemoteAddr = "a.test", tt.remote
			req.Header.Set("X-Forwarded-For", tt.xff)
			h.ServeHTTP(httptest.NewRecorder(), req)
			if got != tt.want {
				t.Fatalf("ClientIP = %q; want %q", got, tt.want)
			}
		})
	}
}
