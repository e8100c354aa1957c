package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/lectern/lectern/adminapi"
	"github.com/lectern/lectern/adminapi/s3files"
	"github.com/lectern/lectern/authserver"
	"github.com/lectern/lectern/authserver/bearer"
	"github.com/lectern/lectern/authserver/cimd"
	"github.com/lectern/lectern/authserver/keys"
	"github.com/lectern/lectern/authserver/password"
	"github.com/lectern/lectern/internal/platform"
	"github.com/lectern/lectern/session"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/storage/cache"
	"github.com/lectern/lectern/storage/sqlstore"
	"github.com/lectern/lectern/tenant"
	"github.com/lectern/lectern/ui"
)

// app is the opened process state every command shares.
type app struct {
	cfg      *config
	logger   *slog.Logger
	store    *sqlstore.Store
	cache    storage.Cache
	keys     *keys.Manager
	platform *platform.Platform
	verifier *bearer.Verifier
	auth     *authserver.Server
	sessions *session.Store
	// files keeps uploads; opened only for serving (openOptions.files).
	files adminapi.FileStore
}

// openOptions says how much of the app a command needs.
type openOptions struct {
	// migrate applies pending migrations (the embedded default always does).
	migrate bool
	// requireCurrentSchema refuses to run on a schema that lacks migrations.
	requireCurrentSchema bool
	// files opens the upload store (--files-url), which serving needs.
	files bool
}

// openApp opens storage, the cache and the key manager.
func openApp(ctx context.Context, cfg *config, logger *slog.Logger, o openOptions) (*app, error) {
	a := &app{cfg: cfg, logger: logger}
	ok := false
	defer func() {
		if !ok {
			a.Close()
		}
	}()
	var err error
	a.store, err = sqlstore.Open(ctx, cfg.databaseURL(), &sqlstore.Options{Logger: logger, MaxOpenConns: cfg.DBMaxConns})
	if err != nil {
		return nil, err
	}
	if o.migrate || cfg.embeddedDB() {
		applied, err := a.store.Migrate(ctx)
		if err != nil {
			return nil, err
		}
		for _, m := range applied {
			logger.Info("migration applied", "migration", m)
		}
	}
	if o.requireCurrentSchema {
		v, err := a.store.SchemaVersion(ctx)
		if err != nil {
			return nil, err
		}
		migs, err := sqlstore.Migrations(a.store.Dialect())
		if err != nil {
			return nil, err
		}
		if v < len(migs) {
			return nil, fmt.Errorf("the database schema is at version %d, this binary needs %d: run 'lectern migrate' first", v, len(migs))
		}
	}
	if cfg.RedisURL == "" {
		a.cache = cache.NewMemory(nil)
	} else {
		// Assigned only on success: a nil *Redis in the interface would
		// not be nil, and closing it on the way out would panic.
		rc, err := cache.NewRedis(ctx, cfg.RedisURL, &cache.RedisOptions{Prefix: cfg.RedisPrefix, NoAutoPipeline: !cfg.RedisAutoPipeline})
		if err != nil {
			return nil, err
		}
		a.cache = rc
	}
	kek, err := keys.LoadKEK(cfg.KEK, cfg.KEKFile, cfg.kekGenerateDir())
	if err != nil {
		return nil, err
	}
	a.keys, err = keys.NewManager(a.store, kek, &keys.Options{Logger: logger})
	if err != nil {
		return nil, err
	}
	a.platform = &platform.Platform{Store: a.store, Keys: a.keys, Cache: a.cache, Logger: logger, PasswordParams: password.Default}
	a.verifier = bearer.New(bearer.Options{Keys: a.keys, Store: a.store, Cache: a.cache, Logger: logger})
	renderer, err := ui.NewRenderer(logger)
	if err != nil {
		return nil, err
	}
	fetcher := cimd.New(cimd.Options{
		Cache: a.cache, Logger: logger, RootCAs: cfg.cimdTestRoots, AllowLoopbackForTests: cfg.cimdTestRoots != nil,
	})
	a.sessions = session.NewStore(a.cache, time.Now)
	a.auth, err = authserver.New(authserver.Options{
		Sessions: a.sessions, Store: a.store, Cache: a.cache, Keys: a.keys, Verifier: a.verifier, UI: renderer, Logger: logger, Platform: a.platform,
		Clients: &authserver.CIMDClients{Fetcher: fetcher, Store: a.store, Now: time.Now},
	})
	if err != nil {
		return nil, err
	}
	if o.files {
		if a.files, err = openFiles(ctx, cfg); err != nil {
			return nil, err
		}
	}
	ok = true
	return a, nil
}

// openFiles opens the store of uploaded files: an S3-compatible bucket
// when --files-url names one, else a directory under --data-dir.
func openFiles(ctx context.Context, cfg *config) (adminapi.FileStore, error) {
	if cfg.FilesURL == "" {
		return &adminapi.DiskFileStore{Root: filepath.Join(cfg.DataDir, "uploads")}, nil
	}
	c, err := s3files.ParseURL(cfg.FilesURL)
	if err != nil {
		return nil, fmt.Errorf("--files-url: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return s3files.New(ctx, c)
}

// Close releases what openApp opened.
func (a *app) Close() {
	if a.cache != nil {
		_ = a.cache.Close()
	}
	if a.store != nil {
		_ = a.store.Close()
	}
}

// ready checks the dependencies /readyz reports on.
func (a *app) ready(ctx context.Context) map[string]error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return map[string]error{
		"database": a.store.Ping(ctx),
		"cache":    a.cache.Ping(ctx),
	}
}

// siteByRef finds a site by slug or numeric ID.
func (a *app) siteByRef(ctx context.Context, ref string) (*storage.Site, error) {
	if ref == "" {
		return nil, errors.New("--site is required (a slug or an ID)")
	}
	s, err := a.store.SiteBySlug(ctx, ref)
	if errors.Is(err, storage.ErrNotFound) {
		var id int64
		if _, scanErr := fmt.Sscan(ref, &id); scanErr == nil {
			return a.store.SiteByID(ctx, tenant.ID(id))
		}
		return nil, fmt.Errorf("no site %q", ref)
	}
	return s, err
}
