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

// ShutdownGrace is how long in-flight requests may take after the serve
// context ends (SIGTERM); Kubernetes' terminationGracePeriodSeconds (30s)
// leaves room beyond it.
const ShutdownGrace = 25 * time.Second

// Serve answers on ln until ctx ends, then lets in-flight requests finish
// (up to ShutdownGrace). Before it answers it subscribes to change
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
		Handler:           s.handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          nil,
	}
	go s.housekeeping(watchCtx)
	if !s.app.Config.KeyRotationOff {
		sched, err := s.app.Platform.KeyScheduler(s.app.Config.KeyPrePublish)
		if err != nil {
			return err
		}
		bg.Go(func() { sched.Run(watchCtx) })
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	s.app.Logger.Info("listening", "addr", ln.Addr().String(), "database", s.app.Store.Dialect(), "cache", cacheKind(s.app.Config))
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
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

func cacheKind(cfg *Config) string {
	if cfg.RedisURL == "" {
		return "memory"
	}
	return "redis"
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
