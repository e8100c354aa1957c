package server

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// The process endpoints that are no business of a site's visitors live on
// a listener of their own (--metrics-addr, default loopback; DESIGN §11):
// /metrics (and, with --pprof, the Go profiler) there only, never on a
// site's origin, where anyone could read the fleet's traffic figures or
// start a CPU profile. /healthz and /readyz are served there as well as on
// the main listener, which load balancers probe.

// OpsHandler is what the metrics listener serves.
func (s *Server) OpsHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.registry, promhttp.HandlerOpts{Registry: s.registry}))
	// The same answers as on the main listener (one implementation; the
	// router's middleware gives them request ids and deadlines).
	mux.Handle("GET /healthz", s.echo)
	mux.Handle("GET /readyz", s.echo)
	if s.app.Config.Pprof {
		mux.HandleFunc("GET /debug/pprof/", pprof.Index)
		// Not the command line: --kek, --database-url and --smtp-url may
		// be flags with secrets in them, and pprof's tools do without it.
		mux.HandleFunc("GET /debug/pprof/cmdline", http.NotFound)
		mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	}
	return mux
}

// ServeOps answers OpsHandler on ln until ctx ends.
func (s *Server) ServeOps(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{
		Handler:           s.OpsHandler(),
		ReadHeaderTimeout: 10 * time.Second,
		// A CPU profile or trace runs for its ?seconds= (30 by default),
		// which pprof refuses beyond the write timeout.
		WriteTimeout:   2 * time.Minute,
		IdleTimeout:    2 * time.Minute,
		MaxHeaderBytes: 16 << 10,
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	s.app.Logger.Info("metrics listening", "addr", ln.Addr().String(), "pprof", s.app.Config.Pprof)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// Scrapes are short; the main listener's shutdown is what matters.
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = hs.Shutdown(sctx)
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
