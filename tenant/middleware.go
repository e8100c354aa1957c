package tenant

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// MiddlewareOptions configures the Host → Site resolution of requests (Admit).
type MiddlewareOptions struct {
	// TrustedProxies are the peers whose X-Forwarded-Host,
	// X-Forwarded-Proto and X-Forwarded-For headers are believed
	// (LECTERN_TRUSTED_PROXIES; the right-most value of each, the one the
	// proxy appended). Headers from anyone else are ignored.
	TrustedProxies []netip.Prefix
	// Logger receives lookup failures. Required.
	Logger *slog.Logger
}

// Admit resolves the request's site from its Host (or, from a trusted
// proxy, X-Forwarded-Host) and returns ctx carrying it (and, from a
// trusted proxy, the client's address); the caller puts it in the request
// (the server does, with the rest of the request's context, in one clone).
// A malformed host is answered 400, an unknown one 404, a failed lookup
// 503, each with an RFC 6749-style JSON body, and Admit returns false. An
// https site is served over https only, with HSTS (see secure). The lookup
// waits no longer than ctx allows.
func (r *Resolver) Admit(ctx context.Context, w http.ResponseWriter, req *http.Request, opts *MiddlewareOptions) (context.Context, bool) {
	rawHost, scheme := req.Host, "http"
	if req.TLS != nil {
		scheme = "https"
	}
	if trusted(req.RemoteAddr, opts.TrustedProxies) {
		if h := lastValue(req.Header.Get("X-Forwarded-Host")); h != "" {
			rawHost = h
		}
		if p := strings.ToLower(lastValue(req.Header.Get("X-Forwarded-Proto"))); p == "http" || p == "https" {
			scheme = p
		}
		// The address our proxy saw: per-IP limits behind a load
		// balancer would otherwise count every client as one.
		if ip, ok := forwardedFor(req); ok {
			ctx = context.WithValue(ctx, clientIPKey, ip)
		}
	}
	host, err := CanonicalHost(rawHost, scheme)
	if err != nil {
		WriteError(w, http.StatusBadRequest, "invalid_request", "the Host header is not a valid host[:port]")
		return nil, false
	}
	site, err := r.Resolve(ctx, host)
	switch {
	case errors.Is(err, ErrUnknownHost):
		WriteError(w, http.StatusNotFound, "not_found", "no site is served at this host")
		return nil, false
	case err != nil:
		opts.Logger.ErrorContext(ctx, "site lookup failed", "host", host, "err", err)
		w.Header().Set("Retry-After", "5")
		WriteError(w, http.StatusServiceUnavailable, "temporarily_unavailable", "the site directory is unavailable; try again shortly")
		return nil, false
	}
	if !secure(w, req, site, scheme) {
		return nil, false
	}
	return WithSite(ctx, site), true
}

// ErrorCode is the error code of an RFC 6749-style answer with an HTTP
// status and nothing more specific to say.
func ErrorCode(status int) string {
	switch status {
	case http.StatusNotFound:
		return "not_found"
	case http.StatusMethodNotAllowed:
		return "method_not_allowed"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusUnsupportedMediaType:
		return "unsupported_media_type"
	case http.StatusTooManyRequests:
		return "rate_limited"
	case http.StatusUnauthorized:
		return "invalid_token"
	case http.StatusForbidden:
		return "access_denied"
	case http.StatusServiceUnavailable:
		return "temporarily_unavailable"
	}
	if status >= 500 {
		return "server_error"
	}
	return "invalid_request"
}

// WriteError writes an RFC 6749 §5.2-style JSON error. It is the answer of
// every Lectern endpoint that has no protocol-specific error format.
func WriteError(w http.ResponseWriter, status int, code, description string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	// The Host middleware answers with it before any handler's security
	// headers are set (docs/security.md: nosniff and no-referrer on every
	// answer).
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(struct {
		Error       string `json:"error"`
		Description string `json:"error_description,omitempty"`
	}{code, description})
}

func trusted(remoteAddr string, proxies []netip.Prefix) bool {
	if len(proxies) == 0 {
		return false
	}
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	ip = ip.Unmap()
	for _, p := range proxies {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// lastValue returns the right-most element of a comma-separated header: the
// one our own (trusted) proxy appended, not one a client sent ahead of it.
func lastValue(v string) string {
	if i := strings.LastIndexByte(v, ','); i >= 0 {
		v = v[i+1:]
	}
	return strings.TrimSpace(v)
}

// ParseTrustedProxies parses a comma-separated list of IPs and CIDR prefixes.
func ParseTrustedProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if strings.Contains(f, "/") {
			p, err := netip.ParsePrefix(f)
			if err != nil {
				return nil, err
			}
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, err
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

// ClientIP is the address of the request's client, without port or IPv6
// brackets: what per-IP rate limits, audit events, the access log and the
// request's span record. It is the peer's address, or, when the peer is a
// trusted proxy, the right-most X-Forwarded-For value (the one that proxy
// appended): the address WithClientIP put in the request's context, else
// the peer's.
func ClientIP(r *http.Request) string {
	if ip, ok := r.Context().Value(clientIPKey).(string); ok {
		return ip
	}
	return peerIP(r.RemoteAddr)
}

// WithClientIP returns ctx carrying the address of r's client (ClientIP),
// as the peer and proxies make it: the peer's address, or, when the peer is
// one of proxies, the right-most X-Forwarded-For value. The server stores
// it before anything else runs, so that what the request writes (access
// log, span, audit events, rate limits) names one address, and code that
// has only the context (ClientIPFrom) finds it too.
func WithClientIP(ctx context.Context, r *http.Request, proxies []netip.Prefix) context.Context {
	ip := peerIP(r.RemoteAddr)
	if trusted(r.RemoteAddr, proxies) {
		if fwd, ok := forwardedFor(r); ok {
			ip = fwd
		}
	}
	return context.WithValue(ctx, clientIPKey, ip)
}

// ClientIPFrom returns the client's address that WithClientIP (or Admit,
// from a trusted proxy) put in ctx, or "".
func ClientIPFrom(ctx context.Context) string {
	ip, _ := ctx.Value(clientIPKey).(string)
	return ip
}

// TrustedPeer reports whether r's peer is one of proxies, whose forwarded
// headers (and request id and trace context) are believed.
func TrustedPeer(r *http.Request, proxies []netip.Prefix) bool {
	return trusted(r.RemoteAddr, proxies)
}

// forwardedFor is the right-most X-Forwarded-For value of r, if it is an
// IP address: the one our (trusted) proxy appended.
func forwardedFor(r *http.Request) (string, bool) {
	ip, err := netip.ParseAddr(lastValue(r.Header.Get("X-Forwarded-For")))
	if err != nil {
		return "", false
	}
	return ip.Unmap().String(), true
}

// peerIP is remoteAddr without its port or IPv6 brackets.
func peerIP(remoteAddr string) string {
	if host, _, err := net.SplitHostPort(remoteAddr); err == nil {
		return host
	}
	return strings.TrimSuffix(strings.TrimPrefix(remoteAddr, "["), "]")
}
