package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/lectern/lectern/internal/server"
)

// config holds the process settings: the wiring's (server.Config) and
// the CLI's own. Each is a flag whose default comes from an environment
// variable.
type config struct {
	server.Config
	Addr      string
	LogLevel  string
	LogFormat string
	DebugAddr string
	DemoSeed  bool
	// rotationFlag is --key-rotation, read after parsing.
	rotationFlag *bool
}

// connection defines the flags every command uses to open the app: the
// database, the key-encryption key and the cache. serving adds the two
// that only matter under load.
func (c *config) connection(fs *cmdFlags, serving bool) {
	fs.group("Connection", func() {
		fs.str(&c.DatabaseURL, "database-url", "DATABASE_URL", "", "PostgreSQL URL (postgres://...) or sqlite:<path>; empty: embedded SQLite under --data-dir")
		fs.str(&c.DataDir, "data-dir", "LECTERN_DATA_DIR", "./data", "directory of the embedded default (database, generated KEK)")
		fs.str(&c.KEK, "kek", "LECTERN_KEK", "", "key-encryption key: base64 of 32 bytes")
		fs.str(&c.KEKFile, "kek-file", "LECTERN_KEK_FILE", "", "file holding the key-encryption key (base64)")
		fs.str(&c.KEKPrevious, "kek-previous", "LECTERN_KEK_PREVIOUS", "", "previous key-encryption keys, comma-separated: rows sealed under them still open while `lectern kek rotate` re-seals them")
		fs.duration(&c.KeyRotationPeriod, "key-rotation-period", "LECTERN_KEY_ROTATION_PERIOD", 90*24*time.Hour, "how long a signing key signs before it is rotated (a site's key_rotation_days setting overrides it)")
		fs.str(&c.RedisURL, "redis-url", "REDIS_URL", "", "Redis URL (redis://...); empty: in-memory cache (one process only)")
		fs.str(&c.RedisPrefix, "redis-prefix", "LECTERN_REDIS_PREFIX", "", "prefix of every Redis key and channel, to share one Redis between deployments")
		if serving {
			fs.integer(&c.DBMaxConns, "db-max-conns", "LECTERN_DB_MAX_CONNS", 32, "PostgreSQL connections per process; a few per core is best")
			fs.boolean(&c.RedisAutoPipeline, "redis-autopipeline", "LECTERN_REDIS_AUTOPIPELINE", true, "batch the Redis commands of concurrent requests into shared pipelines")
		}
	})
	if !serving {
		c.RedisAutoPipeline = true
	}
}

// logging defines the log flags of the commands that log as they go
// (serve, migrate). The others print their result and log only warnings.
func (c *config) logging(fs *cmdFlags, serving bool) {
	fs.group("Logging", func() {
		fs.str(&c.LogLevel, "log-level", "LECTERN_LOG_LEVEL", "info", "debug, info, warn or error")
		fs.str(&c.LogFormat, "log-format", "LECTERN_LOG_FORMAT", "text", "text or json")
		if serving {
			fs.boolean(&c.AccessLog, "access-log", "LECTERN_ACCESS_LOG", true, "log every request")
		}
	})
}

// serving defines serve's own flags.
func (c *config) serving(fs *cmdFlags) {
	fs.str(&c.Addr, "addr", "LECTERN_ADDR", ":8080", "listen address")
	fs.str(&c.TrustedProxies, "trusted-proxies", "LECTERN_TRUSTED_PROXIES", "", "comma-separated IPs/CIDRs whose X-Forwarded-Host/-Proto are trusted")
	fs.str(&c.FilesURL, "files-url", "LECTERN_FILES_URL", "", "where uploaded files go: s3://<bucket>[/<prefix>]?endpoint=<host:port>&region=<r> (credentials from AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY); empty: <data-dir>/uploads, for one replica only")
	fs.str(&c.DebugAddr, "debug-addr", "LECTERN_DEBUG_ADDR", "", "if set, serve net/http/pprof on this address (keep it on loopback)")
	fs.duration(&c.SiteCacheTTL, "site-cache-ttl", "LECTERN_SITE_CACHE_TTL", time.Minute, "how long a replica serves its copy of a site before revalidating it in the background (bounds staleness when a change broadcast is lost)")
	fs.integer(&c.SiteCacheEntries, "site-cache-entries", "LECTERN_SITE_CACHE_ENTRIES", 100_000, "hosts a replica keeps in memory (least recently used dropped first)")
	fs.boolean(&c.DemoSeed, "demo-seed", "LECTERN_DEMO_SEED", true, "seed the demo sites on the first embedded start")
	fs.duration(&c.KeyPrePublish, "key-pre-publish", "LECTERN_KEY_PRE_PUBLISH", 24*time.Hour, "how long a scheduled next signing key is in the JWKS before it signs")
	var rotate bool
	fs.boolean(&rotate, "key-rotation", "LECTERN_KEY_ROTATION", true, "run the key rotation scheduler on this replica (one replica at a time works, by a lease)")
	c.rotationFlag = &rotate
}

// port is the port of Addr, for the demo origins.
func (c *config) port() (int, error) {
	_, p, err := net.SplitHostPort(c.Addr)
	if err != nil {
		return 0, fmt.Errorf("--addr %q: %w", c.Addr, err)
	}
	n, err := strconv.Atoi(p)
	if err != nil || n <= 0 || n > 65535 {
		return 0, fmt.Errorf("--addr %q: the demo seed needs a fixed port", c.Addr)
	}
	return n, nil
}

func (c *config) logger(w *os.File) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return nil, fmt.Errorf("--log-level %q: %w", c.LogLevel, err)
	}
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler
	switch strings.ToLower(c.LogFormat) {
	case "json":
		h = slog.NewJSONHandler(w, opts)
	case "text", "":
		h = slog.NewTextHandler(w, opts)
	default:
		return nil, errors.New("--log-format must be text or json")
	}
	return slog.New(server.LogHandler(h)), nil
}
