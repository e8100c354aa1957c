package main

import (
	"errors"
	"flag"
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
}

// register binds the shared settings to fs.
func (c *config) register(fs *flag.FlagSet, getenv func(string) string) {
	str := func(p *string, name, env, def, help string) {
		v := getenv(env)
		if v == "" {
			v = def
		}
		fs.StringVar(p, name, v, help+" (env "+env+")")
	}
	boolean := func(p *bool, name, env string, def bool, help string) {
		v := def
		if s := getenv(env); s != "" {
			if b, err := strconv.ParseBool(s); err == nil {
				v = b
			}
		}
		fs.BoolVar(p, name, v, help+" (env "+env+")")
	}
	str(&c.Addr, "addr", "LECTERN_ADDR", ":8080", "listen address")
	str(&c.DatabaseURL, "database-url", "DATABASE_URL", "", "PostgreSQL URL (postgres://...) or sqlite:<path>; empty: embedded SQLite under --data-dir")
	str(&c.RedisURL, "redis-url", "REDIS_URL", "", "Redis URL (redis://...); empty: in-memory cache (one process only)")
	str(&c.RedisPrefix, "redis-prefix", "LECTERN_REDIS_PREFIX", "", "prefix of every Redis key and channel, to share one Redis between deployments")
	str(&c.KEK, "kek", "LECTERN_KEK", "", "key-encryption key: base64 of 32 bytes")
	str(&c.KEKFile, "kek-file", "LECTERN_KEK_FILE", "", "file holding the key-encryption key (base64)")
	str(&c.DataDir, "data-dir", "LECTERN_DATA_DIR", "./data", "directory of the embedded default (database, generated KEK)")
	str(&c.TrustedProxies, "trusted-proxies", "LECTERN_TRUSTED_PROXIES", "", "comma-separated IPs/CIDRs whose X-Forwarded-Host/-Proto are trusted")
	str(&c.FilesURL, "files-url", "LECTERN_FILES_URL", "", "where uploaded files go: s3://<bucket>[/<prefix>]?endpoint=<host:port>&region=<r> (credentials from AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY); empty: <data-dir>/uploads, for one replica only")
	str(&c.DebugAddr, "debug-addr", "LECTERN_DEBUG_ADDR", "", "if set, serve net/http/pprof on this address (keep it on loopback)")
	str(&c.LogLevel, "log-level", "LECTERN_LOG_LEVEL", "info", "debug, info, warn or error")
	str(&c.LogFormat, "log-format", "LECTERN_LOG_FORMAT", "text", "text or json")
	ttl := 5 * time.Second
	if d, err := time.ParseDuration(getenv("LECTERN_SITE_CACHE_TTL")); err == nil && d > 0 {
		ttl = d
	}
	fs.DurationVar(&c.SiteCacheTTL, "site-cache-ttl", ttl, "how long a replica trusts its copy of a site without a change broadcast (env LECTERN_SITE_CACHE_TTL)")
	conns := 32
	if n, err := strconv.Atoi(getenv("LECTERN_DB_MAX_CONNS")); err == nil && n > 0 {
		conns = n
	}
	fs.IntVar(&c.DBMaxConns, "db-max-conns", conns, "PostgreSQL connections per process; a few per core is best (env LECTERN_DB_MAX_CONNS)")
	boolean(&c.AccessLog, "access-log", "LECTERN_ACCESS_LOG", true, "log every request")
	boolean(&c.RedisAutoPipeline, "redis-autopipeline", "LECTERN_REDIS_AUTOPIPELINE", true, "batch the Redis commands of concurrent requests into shared pipelines")
	boolean(&c.DemoSeed, "demo-seed", "LECTERN_DEMO_SEED", true, "seed the demo sites on the first embedded start")
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

// errUsage reports that flag parsing already printed the problem.
var errUsage = errors.New("usage")

// parseFlags parses args, mapping -h and bad flags to errUsage.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errUsage
		}
		return errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "unexpected arguments: %v\n", fs.Args())
		return errUsage
	}
	return nil
}
