package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/lectern/lectern/internal/platform"
	"github.com/lectern/lectern/internal/server"
	"github.com/lectern/lectern/limits"
	"github.com/lectern/lectern/session"
)

// config holds the process settings: the wiring's (server.Config) and
// the CLI's own. Each is a flag whose default comes from an environment
// variable.
type config struct {
	server.Config
	Addr        string
	MetricsAddr string
	LogLevel    string
	LogFormat   string
	DemoSeed    bool
	// limitValues are the --limit-* flags, copied into Config.Limits by
	// applyLimits once parsed.
	limitValues map[limits.Name]*int
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
		fs.str(&c.KEKPrevious, "kek-previous", "LECTERN_KEK_PREVIOUS", "", "previous key-encryption keys, comma-separated: rows sealed under them still open while 'lectern kek rotate' re-seals them")
		fs.duration(&c.KeyRotationPeriod, "key-rotation-period", "LECTERN_KEY_ROTATION_PERIOD", 90*24*time.Hour, "how long a signing key signs before it is rotated (a site's key_rotation_days setting overrides it)")
		fs.str(&c.RedisURL, "redis-url", "REDIS_URL", "", "Redis URL: redis://[user:pass@]host:port/db (rediss:// for TLS), a Sentinel group redis+sentinel://[user:pass@]h1:26379,h2:26379/<master>/<db>[?sentinel_password=...], or a Cluster redis+cluster://[user:pass@]h1:7000,h2:7001 (rediss+... for TLS); empty: in-memory cache (one process only)")
		fs.str(&c.RedisPrefix, "redis-prefix", "LECTERN_REDIS_PREFIX", "", "prefix of every Redis key and channel, to share one Redis between deployments")
		fs.boolean(&c.RedisAllowEviction, "redis-allow-eviction", "LECTERN_REDIS_ALLOW_EVICTION", false, "accept a Redis whose maxmemory-policy may evict keys (refused by default: eviction drops sessions, codes and rate limits)")
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
	fs.str(&c.TrustedProxies, "trusted-proxies", "LECTERN_TRUSTED_PROXIES", "", "comma-separated IPs/CIDRs whose X-Forwarded-Host/-Proto/-For are trusted (client addresses for per-IP limits come from X-Forwarded-For)")
	fs.str(&c.FilesURL, "files-url", "LECTERN_FILES_URL", "", "where uploaded files go: s3://<bucket>[/<prefix>]?endpoint=<host:port>&region=<r> (credentials from AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY); empty: <data-dir>/uploads, for one replica only")
	fs.strOrNone(&c.MetricsAddr, "metrics-addr", "LECTERN_METRICS_ADDR", "127.0.0.1:9090", "listen address of /metrics (Prometheus), /healthz, /readyz and, with --pprof, /debug/pprof/: never a site's origin; empty: none")
	fs.boolean(&c.Pprof, "pprof", "LECTERN_PPROF", false, "serve the Go profiler (net/http/pprof) on --metrics-addr")
	fs.durationOrZero(&c.ShutdownDelay, "shutdown-delay", "LECTERN_SHUTDOWN_DELAY", server.DefaultShutdownDelay, "after SIGTERM, answer /readyz with 503 this long while still serving, so load balancers stop sending requests before the listener closes (0s: close at once)")
	fs.duration(&c.SiteCacheTTL, "site-cache-ttl", "LECTERN_SITE_CACHE_TTL", time.Minute, "how long a replica serves its copy of a site before revalidating it in the background (bounds staleness when a change broadcast is lost)")
	fs.integer(&c.SiteCacheEntries, "site-cache-entries", "LECTERN_SITE_CACHE_ENTRIES", 100_000, "hosts a replica keeps in memory (least recently used dropped first)")
	fs.boolean(&c.DemoSeed, "demo-seed", "LECTERN_DEMO_SEED", true, "seed the demo sites on the first embedded start")
	fs.duration(&c.KeyPrePublish, "key-pre-publish", "LECTERN_KEY_PRE_PUBLISH", 24*time.Hour, "how long a scheduled next signing key is in the JWKS before it signs")
	var rotate bool
	fs.boolean(&rotate, "key-rotation", "LECTERN_KEY_ROTATION", true, "run the key rotation scheduler on this replica (one replica at a time works, by a lease)")
	c.rotationFlag = &rotate
	fs.str(&c.SMTPURL, "smtp-url", "LECTERN_SMTP_URL", "", "SMTP server of the account mail: smtp://user:pass@host:port (STARTTLS when offered; ?starttls=required to insist) or smtps://... (implicit TLS); empty: each message is logged and written to <data-dir>/outbox/*.eml")
	fs.str(&c.MailFrom, "mail-from", "LECTERN_MAIL_FROM", "no-reply@localhost", "sender address of the account mail, unless a site sets its own (lectern site update --mail-from-address)")
	fs.integer(&c.PasswordChecks, "password-checks", "LECTERN_PASSWORD_CHECKS", runtime.GOMAXPROCS(0),
		fmt.Sprintf("argon2id threads that may run at once (a sign-in's check takes 2, as does a new password's hash), shared fairly between sites (1 to %d)", maxPasswordChecks))
	fs.defs["password-checks"] = "one per core"
	fs.integer(&c.PasswordQueue, "password-queue", "LECTERN_PASSWORD_QUEUE", 4,
		fmt.Sprintf("sign-ins (and new passwords) of one site that may wait for a password check; beyond it the page answers 503, try again; at most max(64, 8 × this) wait over all sites (1 to %d)", maxPasswordQueue))
	fs.group("Limits (platform defaults; sites override them: lectern site update --limit, the admin API, the admin area)", func() {
		c.limitValues = map[limits.Name]*int{}
		for _, l := range limits.All {
			v := new(int)
			env := "LECTERN_" + strings.ToUpper(strings.ReplaceAll(l.Flag, "-", "_"))
			fs.integer(v, l.Flag, env, l.Default, l.Title+": "+l.Unit)
			c.limitValues[l.Name] = v
		}
		fs.integer(&c.SessionsPerAccount, "sessions-per-account", "LECTERN_SESSIONS_PER_ACCOUNT", session.MaxPerUser,
			"browser sessions one account keeps at once, over every site; signing in beyond it ends the oldest (platform-wide: sites cannot override it)")
		fs.integer(&c.Limits.CeilingFactor, "limit-ceiling-factor", "LECTERN_LIMIT_CEILING_FACTOR", limits.DefaultCeilingFactor,
			"a site's operators may raise a limit up to this many times its platform default (sign-in limits: never above it)")
	})
}

// maxSessionsPerAccount bounds --sessions-per-account: signing in lists an
// account's sessions once it holds more than the bound.
const maxSessionsPerAccount = 10000

// maxPasswordChecks and maxPasswordQueue bound the password gate's flags.
// Below 1 there is no gate (password.NewGate would take its default
// without a word); far above the cores and the memory (64 MiB a hash) a
// replica has, the gate bounds nothing.
const (
	maxPasswordChecks = 1024
	maxPasswordQueue  = 1000
)

// applyLimits checks the limits and the password gate's flags and copies
// the parsed --limit-* flags into Config.Limits. A value out of range is
// a usage error (exit 2), as a value that does not parse is: it prints
// the flag, its variable and the range, and returns errUsage.
func (c *config) applyLimits(fs *cmdFlags) error {
	outOfRange := func(flag string, lo, hi int) error {
		fmt.Fprintf(fs.Output(), "%s: %s must be between %d and %d\n", fs.Name(), fs.envName(flag), lo, hi)
		return errUsage
	}
	c.Limits.Defaults = map[limits.Name]int{}
	for _, l := range limits.All {
		v, ok := c.limitValues[l.Name]
		if !ok {
			continue
		}
		if *v < 1 || *v > limits.MaxValue {
			return outOfRange(l.Flag, 1, limits.MaxValue)
		}
		c.Limits.Defaults[l.Name] = *v
	}
	if c.Limits.CeilingFactor < 1 {
		fmt.Fprintf(fs.Output(), "%s: %s must be at least 1\n", fs.Name(), fs.envName("limit-ceiling-factor"))
		return errUsage
	}
	if c.SessionsPerAccount < 1 || c.SessionsPerAccount > maxSessionsPerAccount {
		return outOfRange("sessions-per-account", 1, maxSessionsPerAccount)
	}
	if c.PasswordChecks < 1 || c.PasswordChecks > maxPasswordChecks {
		return outOfRange("password-checks", 1, maxPasswordChecks)
	}
	if c.PasswordQueue < 1 || c.PasswordQueue > maxPasswordQueue {
		return outOfRange("password-queue", 1, maxPasswordQueue)
	}
	return nil
}

// checkConnection refuses settings that contradict each other: the KEK
// given both inline and as a file (one would be ignored without a word).
// It prints the problem and returns errUsage (exit 2).
func (c *config) checkConnection(fs *cmdFlags) error {
	if c.KEK != "" && c.KEKFile != "" {
		fmt.Fprintf(fs.Output(), "%s: give the key-encryption key once: %s and %s are both set\n", fs.Name(), fs.envName("kek"), fs.envName("kek-file"))
		return errUsage
	}
	return nil
}

// checkMail refuses a platform sender address that is not one: every
// message would fail at the transport and be dropped after its retries. It
// is checked as a site's own sender address is (platform.NormalizeEmail).
func (c *config) checkMail(fs *cmdFlags) error {
	if _, err := platform.NormalizeEmail(c.MailFrom); err != nil {
		fmt.Fprintf(fs.Output(), "%s: %s %q is not an e-mail address: give a bare address such as no-reply@example.com (the site's name is the sender's name)\n",
			fs.Name(), fs.envName("mail-from"), c.MailFrom)
		return errUsage
	}
	return nil
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
		return nil, fmt.Errorf("--log-level %q: must be debug, info, warn or error", c.LogLevel)
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
