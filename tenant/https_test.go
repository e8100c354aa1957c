package tenant

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
)

// An https site answers only over https, with HSTS, and never sends HSTS
// over plain http (RFC 6797 §7.2): plain-http GET and
// HEAD are redirected to its origin, other methods refused, whether the
// request came directly or from a trusted proxy saying so in
// X-Forwarded-Proto; anyone else's X-Forwarded-Proto is not believed. An
// http site (the demo, loopback) is unaffected.
func TestMiddlewareHTTPSSites(t *testing.T) {
	secure := &Site{ID: 1, Slug: "s", Origin: "https://s.test", Aliases: []string{"www.s.test"}}
	plain := &Site{ID: 2, Slug: "p", Origin: "http://localhost:8080"}
	r := NewResolver(&mapLookup{sites: map[string]*Site{"s.test": secure, "www.s.test": secure, "localhost:8080": plain}}, nil)
	proxy := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	tests := []struct {
		name     string
		method   string
		target   string
		host     string
		remote   string
		fwdProto string
		tls      bool
		status   int
		location string
		hsts     bool
	}{
		{name: "https", host: "s.test", tls: true, status: 204, hsts: true},
		{name: "https through a trusted proxy", host: "s.test", remote: "10.1.2.3:1", fwdProto: "https", status: 204, hsts: true},
		{name: "plain http GET", target: "/oauth/authorize?client_id=x&state=y", host: "s.test", status: 308,
			location: "https://s.test/oauth/authorize?client_id=x&state=y"},
		{name: "plain http HEAD", method: http.MethodHead, target: "/.well-known/jwks.json", host: "s.test", status: 308,
			location: "https://s.test/.well-known/jwks.json"},
		{name: "plain http through an alias goes to the origin", target: "/login", host: "www.s.test", status: 308,
			location: "https://s.test/login"},
		{name: "plain http POST", method: http.MethodPost, target: "/api/oauth/token", host: "s.test", status: 400},
		{name: "plain http PUT", method: http.MethodPut, target: "/api/v1/school", host: "s.test", status: 400},
		{name: "the proxy says http", host: "s.test", remote: "10.1.2.3:1", fwdProto: "http", status: 308, location: "https://s.test/"},
		{name: "an untrusted peer says https", host: "s.test", remote: "192.0.2.1:1", fwdProto: "https", status: 308, location: "https://s.test/"},
		{name: "http site", host: "localhost:8080", status: 204},
		{name: "http site, POST", method: http.MethodPost, host: "localhost:8080", status: 204},
		{name: "http site behind TLS", host: "localhost:8080", tls: true, status: 204},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			method, target := tt.method, tt.target
			if method == "" {
				method = http.MethodGet
			}
			if target == "" {
				target = "/"
			}
			req := httptest.NewRequest(method, target, nil)
			req.Host = tt.host
			if tt.remote != "" {
				req.RemoteAddr = tt.remote
			}
			if tt.fwdProto != "" {
				req.Header.Set("X-Forwarded-Proto", tt.fwdProto)
			}
			req.TLS = nil
			if tt.tls {
				req.TLS = &tls.ConnectionState{}
			}
			rec, site := serve(t, r, proxy, req)
			if rec.Code != tt.status {
				t.Fatalf("status %d; want %d (%s)", rec.Code, tt.status, rec.Body)
			}
			if got := rec.Header().Get("Strict-Transport-Security"); (got != "") != tt.hsts || (tt.hsts && got != "max-age=63072000") {
				t.Errorf("Strict-Transport-Security %q", got)
			}
			if got := rec.Header().Get("Location"); got != tt.location {
				t.Errorf("Location %q; want %q", got, tt.location)
			}
			if tt.status != 204 {
				if site != nil {
					t.Error("the handler ran for a plain-http request to an https site")
				}
				if method != http.MethodHead {
					if code := jsonError(t, rec); (tt.status == 400) != (code == "invalid_request") {
						t.Errorf("error %q", code)
					}
				}
			}
		})
	}
}
