package tenant

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
)

// WithClientIP stores the address ClientIP names, for code that has only
// the request's context (ClientIPFrom): the peer, or from a trusted proxy
// the right-most X-Forwarded-For value; X-Real-IP and an untrusted peer's
// X-Forwarded-For are never believed.
func TestWithClientIP(t *testing.T) {
	proxy := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	for _, tt := range []struct {
		name, remote, xff, realIP, want string
		trusted                         bool
	}{
		{"untrusted peer", "192.0.2.1:4000", "198.51.100.7", "198.51.100.8", "192.0.2.1", false},
		{"untrusted peer, text", "192.0.2.1:4000", `"fake\" level=ERROR`, "", "192.0.2.1", false},
		{"trusted proxy", "10.1.2.3:4000", "203.0.113.1, 198.51.100.7", "203.0.113.2", "198.51.100.7", true},
		{"trusted proxy, garbage", "10.1.2.3:4000", "not-an-ip", "", "10.1.2.3", true},
		{"trusted proxy, no header", "10.1.2.3:4000", "", "", "10.1.2.3", true},
		{"IPv6 peer", "[2001:db8::7]:443", "198.51.100.7", "", "2001:db8::7", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/", nil)
			req.RemoteAddr = tt.remote
			if tt.xff != "" {
				req.Header.Set("X-Forwarded-For", tt.xff)
			}
			if tt.realIP != "" {
				req.Header.Set("X-Real-IP", tt.realIP)
			}
			if got := TrustedPeer(req, proxy); got != tt.trusted {
				t.Errorf("TrustedPeer = %v; want %v", got, tt.trusted)
			}
			ctx := WithClientIP(context.Background(), req, proxy)
			if got := ClientIPFrom(ctx); got != tt.want {
				t.Errorf("ClientIPFrom = %q; want %q", got, tt.want)
			}
			if got := ClientIP(req.WithContext(ctx)); got != tt.want {
				t.Errorf("ClientIP = %q; want %q", got, tt.want)
			}
		})
	}
	if got := ClientIPFrom(context.Background()); got != "" {
		t.Errorf("ClientIPFrom without WithClientIP = %q; want \"\"", got)
	}
}
