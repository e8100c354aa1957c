package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"runtime/debug"
	"time"

	"github.com/lectern/lectern/internal/demo"
	"github.com/lectern/lectern/storage"
)

// shutdownGrace is how long in-flight requests may take after SIGTERM;
// Kubernetes' terminationGracePeriodSeconds (30s) leaves room beyond it.
const shutdownGrace = 25 * time.Second

func runServe(ctx context.Context, env *cmdEnv, args []string) error {
	fs := flag.NewFlagSet("lectern serve", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	var cfg config
	cfg.register(fs, env.getenv)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	logger, err := cfg.logger(os.Stderr)
	if err != nil {
		return err
	}
	// zitadel/oidc's op logs through the default logger; give it ours.
	slog.SetDefault(logger)
	// The live heap is small (tens of MiB) and short-lived garbage is
	// plentiful, so the default GOGC=100 runs the collector constantly; 400
	// trades a little memory for CPU. GOGC and GOMEMLIMIT still override.
	if env.getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	a, err := openApp(ctx, &cfg, logger, openOptions{requireCurrentSchema: true, files: true})
	if err != nil {
		return err
	}
	defer a.Close()
	if cfg.embeddedDB() {
		if err := seedEmbedded(ctx, a, env.stdout); err != nil {
			return err
		}
	}
	srv, err := newServer(a)
	if err != nil {
		return err
	}
	if cfg.DebugAddr != "" {
		go servePprof(cfg.DebugAddr, logger)
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	return srv.serve(ctx, ln)
}

// serve answers on ln until ctx ends, then lets in-flight requests finish.
func (s *server) serve(ctx context.Context, ln net.Listener) error {
	watchCtx, stopWatch := context.WithCancel(context.Background())
	defer stopWatch()
	// Start serving only once change broadcasts arrive (or after a few
	// seconds without them: an unreachable cache must not block start-up;
	// /readyz reports it).
	select {
	case <-s.app.platform.Watch(watchCtx, s.resolver, s.app.auth):
	case <-time.After(3 * time.Second):
		s.app.logger.Warn("change broadcasts not subscribed yet; serving anyway")
	}
	hs := &http.Server{
		Handler:           s.echo,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          nil,
	}
	go s.housekeeping(watchCtx)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	s.app.logger.Info("listening", "addr", ln.Addr().String(), "database", s.app.store.Dialect(), "cache", cacheKind(s.app.cfg))
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	s.app.logger.Info("shutting down: finishing in-flight requests", "grace", shutdownGrace)
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	s.app.logger.Info("stopped")
	return nil
}

func cacheKind(cfg *config) string {
	if cfg.RedisURL == "" {
		return "memory"
	}
	return "redis"
}

// seedEmbedded seeds the demo on the first start of the embedded default
// and prints where to find it.
func seedEmbedded(ctx context.Context, a *app, out io.Writer) error {
	port, err := a.cfg.port()
	if err != nil {
		return err
	}
	sites, err := a.store.ListSites(ctx, 0, 1)
	if err != nil {
		return err
	}
	if len(sites) == 0 && a.cfg.DemoSeed {
		if _, err := demo.Seed(ctx, a.platform, a.store, port, time.Now()); err != nil {
			return err
		}
		a.logger.Info("demo seed created")
	}
	if _, err := a.store.SiteBySlug(ctx, demo.AcademySlug); errors.Is(err, storage.ErrNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	printBanner(out, port)
	return nil
}

func printBanner(w io.Writer, port int) {
	fmt.Fprintf(w, `
Lectern is serving the demo sites (embedded default: SQLite + in-memory cache under ./data)

  %-34s Variant A (vendor platforms + CIMD), id_tokens on, MCP connections beta on
  %-34s Variant B (open loopback registration), id_tokens on

  users (password)
    %-22s %-22s owner at both sites
    %-22s %-22s lecturer at Demo Academy
    %-22s %-22s student at both sites
    %-22s %-22s no role anywhere

  clients
    %s (each site): public member client, redirect %s (any port)
    vendor %q → client_id %s

  try: curl %s/.well-known/oauth-authorization-server

`, demo.AcademyOrigin(port)+"  "+demo.AcademyName, demo.OpenOrigin(port)+"  "+demo.OpenName,
		demo.OwnerEmail, demo.OwnerPassword, demo.LecturerEmail, demo.LecturerPassword,
		demo.StudentEmail, demo.StudentPassword, demo.OutsiderEmail, demo.OutsiderPassword,
		demo.MemberClientID, demo.LoopbackRedirect, demo.VendorClientName, demo.VendorClientID,
		demo.AcademyOrigin(port))
}

func newRequestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// servePprof serves the Go profiler on its own listener, never on a site's
// origin.
func servePprof(addr string, logger *slog.Logger) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	logger.Info("pprof listening", "addr", addr)
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	if err := srv.ListenAndServe(); err != nil {
		logger.Error("pprof", "err", err)
	}
}

// housekeeping runs periodic clean-up until ctx ends: abandoned dynamic
// registrations (never used within a day) are deleted every hour. Every
// replica may run it: the deletes are idempotent.
func (s *server) housekeeping(ctx context.Context) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		n, err := s.app.platform.PurgeUnusedClients(ctx, time.Now(), 24*time.Hour)
		switch {
		case err != nil && ctx.Err() == nil:
			s.app.logger.Warn("purging unused registrations failed", "err", err)
		case n > 0:
			s.app.logger.Info("purged unused registrations", "clients", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
