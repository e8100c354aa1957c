package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/lectern/lectern/internal/demo"
	"github.com/lectern/lectern/internal/server"
	"github.com/lectern/lectern/internal/telemetry"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/storage/cache"
)

func runServe(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newCmdFlags(env, "serve", help{
		usage: "lectern serve [flags]",
		about: "Serve every site on one port. Without --database-url it runs the embedded default: SQLite and an " +
			"in-memory cache under --data-dir, a generated key-encryption key, and the demo sites on the first start.",
		examples: []string{
			"lectern serve --addr :8080",
			"DATABASE_URL=postgres://lectern@db:5432/lectern REDIS_URL=redis://redis:6379/0 LECTERN_KEK_FILE=/run/secrets/kek lectern serve",
		},
	})
	var cfg config
	cfg.serving(fs)
	cfg.logging(fs, true)
	cfg.connection(fs, true)
	if err := fs.parse(args); err != nil {
		return err
	}
	if err := cfg.checkConnection(fs); err != nil {
		return err
	}
	if err := cfg.applyLimits(fs); err != nil {
		return err
	}
	if err := cfg.checkMail(fs); err != nil {
		return err
	}
	cfg.KeyRotationOff = !*cfg.rotationFlag
	logger, err := cfg.logger(os.Stderr)
	if err != nil {
		return err
	}
	// zitadel/oidc's op logs through the default logger; give it ours.
	// go-redis has a logger of its own: its lines (a Redis outage's) go
	// through ours too, in the same format.
	slog.SetDefault(logger)
	cache.SetRedisLogger(logger)
	// The live heap is small (tens of MiB) and short-lived garbage is
	// plentiful, so the default GOGC=100 runs the collector constantly; 400
	// trades a little memory for CPU. GOGC and GOMEMLIMIT still override.
	if env.getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	// Traces go where the standard OTEL_* variables say; without an
	// endpoint tracing stays off.
	stopTracing, err := telemetry.Setup(ctx, env.getenv, buildVersion())
	if err != nil {
		return err
	}
	defer func() {
		if err := stopTracing(context.WithoutCancel(ctx)); err != nil {
			logger.Warn("flushing traces failed", "err", err)
		}
	}()
	a, err := server.Open(ctx, &cfg.Config, logger, server.OpenOptions{RequireCurrentSchema: true})
	if err != nil {
		return err
	}
	defer a.Close()
	// A key-encryption key that opens none of the stored signing keys
	// would leave the replica ready while every token request fails: it
	// is refused here as the CLI refuses it (the first start of the
	// embedded default has no keys yet and passes).
	if err := checkKEK(ctx, a); err != nil {
		return err
	}
	srv, err := server.New(ctx, a)
	if err != nil {
		return err
	}
	// Bind both listeners first: a taken port is reported before the
	// banner says the demo is being served.
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	var mln net.Listener
	if cfg.MetricsAddr != "" {
		if mln, err = net.Listen("tcp", cfg.MetricsAddr); err != nil {
			return fmt.Errorf("--metrics-addr %s: %w (choose a free address, or \"\" to serve no metrics)", cfg.MetricsAddr, err)
		}
		defer mln.Close()
	}
	if cfg.EmbeddedDB() {
		if err := seedEmbedded(ctx, a, &cfg, env.stdout); err != nil {
			return err
		}
	}
	if mln != nil {
		// The metrics listener outlives the main one's drain: its /readyz
		// reports "draining" and its metrics are scraped until the main
		// listener has closed, rather than refusing from the signal on.
		opsCtx, stopOps := context.WithCancel(context.WithoutCancel(ctx))
		opsDone := make(chan struct{})
		go func() {
			defer close(opsDone)
			if err := srv.ServeOps(opsCtx, mln); err != nil {
				logger.Error("metrics listener", "err", err)
			}
		}()
		defer func() { stopOps(); <-opsDone }()
	}
	return srv.Serve(ctx, ln)
}

// seedEmbedded seeds the demo on the first start of the embedded default
// and prints where to find it. The demo's origins carry the port, so
// seeding needs a fixed one; with the seed off, or already done, any
// --addr works (127.0.0.1:0 for tests and sidecars), and the banner is
// printed only when the port is known.
func seedEmbedded(ctx context.Context, a *server.App, cfg *config, out io.Writer) error {
	sites, err := a.Store.ListSites(ctx, 0, 1)
	if err != nil {
		return err
	}
	if len(sites) == 0 && cfg.DemoSeed {
		port, err := cfg.port()
		if err != nil {
			return err
		}
		if _, err := demo.Seed(ctx, a.Platform, a.Store, port, time.Now()); err != nil {
			return err
		}
		a.Logger.Info("demo seed created")
	}
	academy, err := a.Store.SiteBySlug(ctx, demo.AcademySlug)
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	port, err := cfg.port()
	if err != nil {
		return nil
	}
	// The demo's origins carry the port of the first start: the sites
	// answer there, whatever --addr says now.
	seeded := originPort(academy.Origin)
	if seeded == 0 {
		return nil
	}
	headline := "Lectern is serving the demo sites (embedded default: SQLite + in-memory cache under " + cfg.DataDir + ")"
	if seeded != port {
		headline += fmt.Sprintf("\n\n  NOTE: the demo sites were seeded for port %d and answer only there; this server listens on %s.\n"+
			"  Serve with --addr :%d, change their origins (lectern site update --origin), or start from a fresh --data-dir.",
			seeded, cfg.Addr, seeded)
	}
	printBanner(out, seeded, headline)
	return nil
}

// originPort is the port an origin names explicitly, or 0.
func originPort(origin string) int {
	u, err := url.Parse(origin)
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(u.Port())
	return n
}

// printBanner prints the demo's sites, users and clients under headline.
func printBanner(w io.Writer, port int, headline string) {
	fmt.Fprintf(w, `
%s

  %-34s Variant A (vendor platforms + CIMD), id_tokens on, MCP connections beta on
  %-34s Variant B (open loopback registration), id_tokens on

  users (password as seeded)
    %-22s %-22s owner at both sites
    %-22s %-22s lecturer at Demo Academy
    %-22s %-22s student at both sites
    %-22s %-22s no role anywhere

  clients
    %s (each site): public member client, redirect %s (any port)
    vendor %q → client_id %s

  try: curl %s/.well-known/oauth-authorization-server

`, headline, demo.AcademyOrigin(port)+"  "+demo.AcademyName, demo.OpenOrigin(port)+"  "+demo.OpenName,
		demo.OwnerEmail, demo.OwnerPassword, demo.LecturerEmail, demo.LecturerPassword,
		demo.StudentEmail, demo.StudentPassword, demo.OutsiderEmail, demo.OutsiderPassword,
		demo.MemberClientID, demo.LoopbackRedirect, demo.VendorClientName, demo.VendorClientID,
		demo.AcademyOrigin(port))
}

// buildVersion is the module version the binary was built from, for the
// service.version of traces.
func buildVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "devel"
}
