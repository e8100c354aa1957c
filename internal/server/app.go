package server

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/lectern/lectern/adminapi"
	"github.com/lectern/lectern/adminapi/s3files"
	"github.com/lectern/lectern/authserver/keys"
	"github.com/lectern/lectern/authserver/password"
	"github.com/lectern/lectern/internal/platform"
	"github.com/lectern/lectern/mail"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/storage/cache"
	"github.com/lectern/lectern/storage/sqlstore"
)

// App is the opened process state every command shares: the store, the
// cache, the key manager and the platform operations over them. The CLI
// commands use it directly; New builds the HTTP side on top of it.
type App struct {
	Config   *Config
	Logger   *slog.Logger
	Store    *sqlstore.Store
	Cache    storage.Cache
	Keys     *keys.Manager
	Platform *platform.Platform
}

// OpenOptions says how much preparation of the database a command needs.
type OpenOptions struct {
	// Migrate applies pending migrations (the embedded default always does).
	Migrate bool
	// RequireCurrentSchema refuses to run on a schema that lacks migrations.
	RequireCurrentSchema bool
}

// Open opens storage, the cache and the key manager.
func Open(ctx context.Context, cfg *Config, logger *slog.Logger, o OpenOptions) (*App, error) {
	a := &App{Config: cfg, Logger: logger}
	ok := false
	defer func() {
		if !ok {
			a.Close()
		}
	}()
	// The KEK is read before anything is done to the database: a command
	// that cannot run without it (every one does) must not migrate the
	// schema first and then fail.
	kek, previous, err := keys.LoadKEKs(cfg.KEK, cfg.KEKPrevious, cfg.KEKFile, cfg.kekGenerateDir())
	if err != nil {
		return nil, err
	}
	if err := checkDatabaseFile(cfg, o); err != nil {
		return nil, err
	}
	a.Store, err = sqlstore.Open(ctx, cfg.EffectiveDatabaseURL(), &sqlstore.Options{Logger: logger, MaxOpenConns: cfg.DBMaxConns, TracerProvider: cfg.TracerProvider})
	if err != nil {
		return nil, err
	}
	if o.Migrate || cfg.EmbeddedDB() {
		applied, err := a.Store.Migrate(ctx)
		if err != nil {
			return nil, err
		}
		for _, m := range applied {
			logger.Info("migration applied", "migration", m)
		}
	}
	if o.RequireCurrentSchema {
		v, err := a.Store.SchemaVersion(ctx)
		if err != nil {
			return nil, err
		}
		need, err := sqlstore.LatestVersion(a.Store.Dialect())
		if err != nil {
			return nil, err
		}
		if v < need {
			return nil, fmt.Errorf("the database schema is at version %d, this binary needs %d: run 'lectern migrate' first", v, need)
		}
		if v > need {
			// The previous release serves on the new schema while a
			// rolling upgrade lasts (docs/decisions.md, "Schema changes
			// keep the previous release serving"); only migrate refuses.
			logger.Warn("the database schema is newer than this binary: running as the previous release of a rolling upgrade; upgrade lectern",
				"schema_version", v, "binary_version", need)
		}
	}
	if cfg.RedisURL == "" {
		a.Cache = cache.NewMemory(nil)
	} else {
		// Assigned only on success: a nil *Redis in the interface would
		// not be nil, and closing it on the way out would panic.
		rc, err := cache.NewRedis(ctx, cfg.RedisURL, &cache.RedisOptions{
			Prefix: cfg.RedisPrefix, NoAutoPipeline: !cfg.RedisAutoPipeline,
			AllowEviction: cfg.RedisAllowEviction, Logger: logger, TracerProvider: cfg.TracerProvider,
			NoTracing: tracingOff(cfg.TracerProvider),
		})
		if errors.Is(err, cache.ErrEvictingPolicy) {
			return nil, fmt.Errorf("%w (--redis-allow-eviction / LECTERN_REDIS_ALLOW_EVICTION=1 accepts it)", err)
		}
		if err != nil {
			return nil, err
		}
		a.Cache = rc
	}
	a.Keys, err = keys.NewManager(a.Store, kek, &keys.Options{Logger: logger, PreviousKEKs: previous, RotationPeriod: cfg.KeyRotationPeriod})
	if err != nil {
		return nil, err
	}
	templates, err := mail.NewTemplates()
	if err != nil {
		return nil, err
	}
	a.Platform = &platform.Platform{Store: a.Store, Keys: a.Keys, Cache: a.Cache, Logger: logger, PasswordParams: password.Default,
		Mail: &platform.Mail{Templates: templates, From: cfg.MailFrom}}
	ok = true
	return a, nil
}

// checkDatabaseFile refuses a sqlite: URL naming a file that does not
// exist, unless the command migrates: a command that only reads or writes
// rows would otherwise create an empty database (and its directories) at a
// mistyped path, and then report that its schema is out of date. The
// embedded default creates its database under --data-dir as it always did.
func checkDatabaseFile(cfg *Config, o OpenOptions) error {
	path, ok := strings.CutPrefix(cfg.DatabaseURL, "sqlite:")
	if !ok || o.Migrate || path == "" || path == ":memory:" || strings.HasPrefix(path, "file:") {
		return nil
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("no database at %s: run 'lectern migrate --database-url sqlite:%s' to create one", path, path)
	}
	return nil
}

// openFiles opens the store of uploaded files: an S3-compatible bucket
// when --files-url names one, else a directory under --data-dir.
func openFiles(ctx context.Context, cfg *Config) (adminapi.FileStore, error) {
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

// Close releases what Open opened.
func (a *App) Close() {
	if a.Cache != nil {
		_ = a.Cache.Close()
	}
	if a.Store != nil {
		_ = a.Store.Close()
	}
}
