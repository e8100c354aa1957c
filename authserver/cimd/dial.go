package cimd

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"syscall"
)

func defaultLookupIP(ctx context.Context, host string) ([]netip.Addr, error) {
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// newClient builds the one HTTP client of f. Everything that could send a
// request somewhere other than a vetted address is switched off: no proxy
// (Proxy nil ignores HTTPS_PROXY and friends), no plain-TCP dialling, no
// redirects (a 3xx comes back as the response, and fetch refuses it), no
// connection reuse across fetches.
func (f *Fetcher) newClient() *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			Proxy: nil,
			DialContext: func(context.Context, string, string) (net.Conn, error) {
				return nil, errors.New("cimd: plain-text connections are not made")
			},
			DialTLSContext:         f.dialTLS,
			DisableKeepAlives:      true,
			MaxResponseHeaderBytes: 32 << 10,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// dialTLS connects to addr (the URL's host:port): it resolves the host once,
// refuses if any address is non-public, connects to the first address and
// verifies the server's certificate for the host. The TCP connection goes to
// the address vetted here, never to a name, so DNS cannot change its answer
// between the check and the connection (rebinding).
func (f *Fetcher) dialTLS(ctx context.Context, network, addr string) (net.Conn, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, newError(err, "The client_id URL has an invalid host.")
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return nil, newError(err, "The client_id URL has an invalid port.")
	}
	ctx, cancel := context.WithTimeout(ctx, f.connectTimeout)
	defer cancel()

	ip, err := f.resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	target := netip.AddrPortFrom(ip, uint16(port)).String()
	traceFrom(ctx).setDialed(target)
	raw, err := f.dial(ctx, "tcp", target)
	if err != nil {
		if ctx.Err() != nil {
			return nil, newError(err, "The client metadata document's server could not be reached in time.")
		}
		return nil, newError(err, "The client metadata document's server could not be reached.")
	}
	conn := tls.Client(raw, &tls.Config{
		ServerName: host,
		RootCAs:    f.rootCA,
		MinVersion: tls.VersionTLS12,
		NextProtos: []string{"http/1.1"},
	})
	if err := conn.HandshakeContext(ctx); err != nil {
		_ = raw.Close()
		var verr *tls.CertificateVerificationError
		switch {
		case errors.As(err, &verr):
			return nil, newError(err, "The client metadata document's server presented a certificate that is not valid for its host.")
		case ctx.Err() != nil:
			return nil, newError(err, "The client metadata document's server did not complete the TLS handshake in time.")
		default:
			return nil, newError(err, "The client metadata document's server did not complete a TLS handshake.")
		}
	}
	return conn, nil
}

// resolve looks host up once (an IP literal is its own answer) and returns
// the address to connect to, or an *Error if the host does not resolve or
// any of its addresses is non-public. One bad address refuses the host:
// connecting to "the public one" would leave which one we reach to the
// host's DNS.
func (f *Fetcher) resolve(ctx context.Context, host string) (netip.Addr, error) {
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		addrs, err = f.lookupIP(ctx, host)
		if err != nil {
			return netip.Addr{}, newError(err, "The client metadata document's host could not be resolved.")
		}
		if len(addrs) == 0 {
			return netip.Addr{}, newError(errors.New("no addresses"), "The client metadata document's host could not be resolved.")
		}
	}
	traceFrom(ctx).setResolved(addrs)
	for _, a := range addrs {
		if !publicAddr(a, f.allowLoopback) {
			return netip.Addr{}, newError(fmt.Errorf("%s resolves to %v; %v is not public", host, addrs, a),
				"The client metadata document's host resolves to a non-public address.")
		}
	}
	return addrs[0].Unmap(), nil
}

// defaultDial connects over TCP. Its Control vets the address once more at
// the socket, so that no future change to the dialling code can connect
// somewhere resolve did not approve.
func (f *Fetcher) defaultDial(ctx context.Context, network, addr string) (net.Conn, error) {
	d := net.Dialer{
		Control: func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil || !publicAddr(ap.Addr(), f.allowLoopback) {
				return fmt.Errorf("cimd: refusing to connect to %s", address)
			}
			return nil
		},
	}
	return d.DialContext(ctx, network, addr)
}

// trace records, for the log, what a fetch resolved and where it connected.
// The transport may still be dialling after the fetch gave up, hence the
// lock.
type trace struct {
	mu       sync.Mutex
	resolved []netip.Addr
	dialed   string
}

type traceKey struct{}

func withTrace(ctx context.Context, t *trace) context.Context {
	return context.WithValue(ctx, traceKey{}, t)
}

// traceFrom returns the trace of ctx; a nil *trace (no trace) ignores
// writes.
func traceFrom(ctx context.Context) *trace {
	t, _ := ctx.Value(traceKey{}).(*trace)
	return t
}

func (t *trace) setResolved(a []netip.Addr) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.resolved = a
}

func (t *trace) setDialed(addr string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.dialed = addr
}

func (t *trace) get() (resolved []netip.Addr, dialed string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.resolved, t.dialed
}
