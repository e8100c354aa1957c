package server

import (
	"crypto/x509"

	"path/filepath"
	"time"

	"github.com/lectern/lectern/limits"
	"github.com/lectern/lectern/mail"
	"go.opentelemetry.io/otel/trace"
)

// Config holds the process settings the wiring needs. The CLI fills it
// from flags and environment variables (named in each field's flag);
// tests fill it directly.
type Config struct {
	// DatabaseURL is a PostgreSQL URL or sqlite:<path>; empty: the
	// embedded SQLite file under DataDir (--database-url).
	DatabaseURL string
	// RedisURL is empty for the in-memory cache (--redis-url).
	RedisURL string
	// RedisPrefix prefixes every Redis key and channel (--redis-prefix).
	RedisPrefix string
	// RedisAutoPipeline batches concurrent Redis commands
	// (--redis-autopipeline; cache.RedisOptions).
	RedisAutoPipeline bool
	// RedisAllowEviction accepts a Redis whose maxmemory-policy may evict
	// keys (--redis-allow-eviction); without it such a Redis is refused.
	RedisAllowEviction bool
	// ShutdownDelay is how long, after SIGTERM, /readyz answers 503 while
	// everything else is still served, before the listener closes
	// (--shutdown-delay). Zero: close at once.
	ShutdownDelay time.Duration
	// SessionsPerAccount bounds one account's browser sessions over every
	// site (--sessions-per-account; 0: session.MaxPerUser).
	SessionsPerAccount int
	// KEK or KEKFile is the key-encryption key; with neither, the embedded
	// default generates one under DataDir (--kek, --kek-file).
	KEK, KEKFile string
	// KEKPrevious are comma-separated previous key-encryption keys, which
	// still open rows during a KEK rotation (--kek-previous).
	KEKPrevious string
	// KeyRotationPeriod is how long a signing key signs before the
	// scheduler replaces it, unless a site sets its own; 0 means the
	// default, 90 days (--key-rotation-period).
	KeyRotationPeriod time.Duration
	// KeyPrePublish is how long a scheduled next key is in the JWKS before
	// it signs; 0 means 24 h (--key-pre-publish).
	KeyPrePublish time.Duration
	// KeyRotationOff stops this replica from running the rotation
	// scheduler (--key-rotation=false).
	KeyRotationOff bool
	// DataDir holds the embedded database, a generated KEK and, without
	// FilesURL, the uploads (--data-dir).
	DataDir string
	// DBMaxConns bounds the PostgreSQL connections (--db-max-conns).
	DBMaxConns int
	// TrustedProxies are the comma-separated IPs/CIDRs whose
	// X-Forwarded-Host/-Proto are believed (--trusted-proxies).
	TrustedProxies string
	// FilesURL is where uploads go: s3://bucket/prefix?... (--files-url).
	FilesURL string
	// SiteCacheTTL is how long a replica trusts its copy of a site
	// without a change broadcast (--site-cache-ttl).
	SiteCacheTTL time.Duration
	// SiteCacheEntries bounds the hosts the resolver keeps in memory
	// (--site-cache-entries; 0: tenant.DefaultResolverEntries).
	SiteCacheEntries int
	// AccessLog logs every request (--access-log).
	AccessLog bool
	// Pprof serves the Go profiler on the metrics listener (--pprof).
	Pprof bool
	// SMTPURL is the SMTP server of the account mail; empty: messages are
	// logged and written to DataDir/outbox (--smtp-url).
	SMTPURL string
	// MailFrom is the platform's sender address (--mail-from).
	MailFrom string
	// Mail tunes the outbox sender loop; tests shorten its waits.
	Mail *mail.SenderOptions
	// Limits are the platform defaults of every rate limit and budget and
	// the ceiling of the operators' overrides (--limit-*; package limits).
	Limits limits.Config
	// PasswordChecks is the argon2id threads that may run at once
	// (--password-checks; default: one per core); PasswordQueue how many
	// sign-ins of one site may wait for them (--password-queue).
	PasswordChecks, PasswordQueue int

	// TracerProvider receives the spans of HTTP requests, SQL statements
	// and Redis commands. Nil: the global provider (cmd/lectern installs
	// one from the OTEL_* variables, or leaves the no-op). Tests pass one
	// with an in-memory exporter.
	TracerProvider trace.TracerProvider

	// CIMDTestRoots lets the CIMD fetcher reach an httptest TLS server on
	// loopback. Test-only: no flag or environment variable sets it.
	CIMDTestRoots *x509.CertPool
}

// EmbeddedDB reports whether the embedded SQLite default is in use.
func (c *Config) EmbeddedDB() bool { return c.DatabaseURL == "" }

// EffectiveDatabaseURL is the database URL, the embedded file's when
// DatabaseURL is empty.
func (c *Config) EffectiveDatabaseURL() string {
	if c.EmbeddedDB() {
		return "sqlite:" + filepath.Join(c.DataDir, "lectern.db")
	}
	return c.DatabaseURL
}

// kekGenerateDir is where a KEK may be generated: only for the embedded
// default. A production deployment must bring its own, the same on every
// replica.
func (c *Config) kekGenerateDir() string {
	if c.EmbeddedDB() && c.KEK == "" && c.KEKFile == "" {
		return c.DataDir
	}
	return ""
}
