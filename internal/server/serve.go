package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// ShutdownGrace is how long in-flight requests may take once the listener
// closes, after the serve context ended (SIGTERM) and Config.ShutdownDelay
// passed; Kubernetes' terminationGracePeriodSeconds must leave room for
// the preStop sleep, the delay and this grace.
const ShutdownGrace = 25 * time.Second

// DefaultShutdownDelay is the CLI's default Config.ShutdownDelay: longer
// than a load balancer's readiness interval.
const DefaultShutdownDelay = 5 * time.Second

// Serve answers on ln until ctx ends, then answers /readyz with 503 for
// Config.ShutdownDelay while still serving everything else, then stops
// accepting and lets in-flight requests finish (up to ShutdownGrace). Before it answers it subscribes to change
// broadcasts, and while it answers it runs the periodic housekeeping.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	watchCtx, stopWatch := context.WithCancel(context.Background())
	// Background work stops before Serve returns and the caller closes
	// the store under it.
	var bg sync.WaitGroup
	defer func() { stopWatch(); bg.Wait() }()
	// Start serving only once change broadcasts arrive (or after a few
	// seconds without them: an unreachable cache must not block start-up;
	// /readyz reports it).
	select {
	case <-s.app.Platform.Watch(watchCtx, s.resolver, s.auth):
	case <-time.After(3 * time.Second):
		s.app.Logger.Warn("change broadcasts not subscribed yet; serving anyway")
	}
	hs := &http.Server{
		Handler:           s.closeWhileDraining(s.handler),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          nil,
	}
	go s.housekeeping(watchCtx)
	// The outbox sender stops with the watch context: after the listener
	// has drained, so mail queued by the last requests still goes out.
	go s.mailer.Run(watchCtx)
	// Revocation versions of the sites this replica serves, for trusting
	// the cache's revocation copies (authserver/bearer).
	go s.verifier.Run(watchCtx)
	if !s.app.Config.KeyRotationOff {
		sched, err := s.app.Platform.KeyScheduler(s.app.Config.KeyPrePublish)
		if err != nil {
			return err
		}
		bg.Go(func() { sched.Run(watchCtx) })
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	s.app.Logger.Info("listening", "addr", ln.Addr().String(), "database", s.app.Store.Dialect(), "cache", cacheInfo(s.app), "mail", s.mailDesc)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	if d := s.app.Config.ShutdownDelay; d > 0 {
		// Load balancers that poll /readyz see 503 and stop sending new
		// requests; until they do, every request is still served.
		s.draining.Store(true)
		s.app.Logger.Info("shutting down: /readyz answers 503, still serving until the listener closes", "delay", d)
		select {
		case err := <-errc:
			return err
		case <-time.After(d):
		}
	}
	s.app.Logger.Info("shutting down: finishing in-flight requests", "grace", ShutdownGrace)
	sctx, cancel := context.WithTimeout(context.Background(), ShutdownGrace)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	s.app.Logger.Info("stopped")
	return nil
}

// closeWhileDraining ends every keep-alive connection after its answer
// once the shutdown delay began (Connection: close): clients and proxies
// open a new connection for their next request, which reaches another
// replica once this one's listener closes. Without it, a connection left
// idle at that moment is closed under a client that may be sending on it,
// and a POST sent there is lost without an answer.
func (s *Server) closeWhileDraining(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.draining.Load() {
			w.Header().Set("Connection", "close")
		}
		next.ServeHTTP(w, r)
	})
}

// housekeeping runs periodic clean-up until ctx ends: abandoned dynamic
// registrations (never used within a day) are deleted every hour. Every
// replica may run it: the deletes are idempotent.
func (s *Server) housekeeping(ctx context.Context) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		n, err := s.app.Platform.PurgeUnusedClients(ctx, time.Now(), 24*time.Hour)
		switch {
		case err != nil && ctx.Err() == nil:
			s.app.Logger.Warn("purging unused registrations failed", "err", err)
		case n > 0:
			s.app.Logger.Info("purged unused registrations", "clients", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func newRequestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
