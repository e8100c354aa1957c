package discovery

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lectern/lectern/tenant"
	"github.com/lectern/lectern/vocab"
)

// KeySource gives the published JWKS of a site (authserver/keys.Manager).
type KeySource interface {
	JWKS(ctx context.Context, site tenant.ID) ([]byte, error)
}

// Handler serves the metadata documents and the JWKS of the request's site.
type Handler struct {
	keys   KeySource
	logger *slog.Logger

	mu    sync.RWMutex
	docs  map[docKey]*document // pre-serialized per site version
	bytes int                  // of the bodies in docs, bounded by maxDocBytes

	hits, misses, evictions atomic.Uint64
}

// maxDocBytes bounds the pre-serialized documents kept in memory (a
// metadata document is about 2 KB: some 30,000 sites' worth); beyond it
// the least recently used (approximately) are rebuilt when next asked for.
const maxDocBytes = 64 << 20

// CacheStats counts document look-ups, for the cache's hit-rate metrics.
type CacheStats struct {
	Hits, Misses, Evictions uint64
	Entries, Bytes          int
}

// Stats returns the document cache's counters.
func (h *Handler) Stats() CacheStats {
	h.mu.RLock()
	n, b := len(h.docs), h.bytes
	h.mu.RUnlock()
	return CacheStats{Hits: h.hits.Load(), Misses: h.misses.Load(), Evictions: h.evictions.Load(), Entries: n, Bytes: b}
}

type docKey struct {
	site tenant.ID
	path string
}

type document struct {
	version time.Time
	body    []byte
	etag    string
	used    atomic.Int64 // UnixNano of the last use, for eviction
}

// NewHandler returns a Handler.
func NewHandler(keys KeySource, logger *slog.Logger) *Handler {
	return &Handler{keys: keys, logger: logger, docs: map[docKey]*document{}}
}

// metadataMaxAge is how long clients may cache metadata documents.
const metadataMaxAge = "public, max-age=300"

// ProtectedResource serves /.well-known/oauth-protected-resource.
func (h *Handler) ProtectedResource(w http.ResponseWriter, r *http.Request) {
	h.serveDoc(w, r, vocab.ProtectedResourcePath, func(s *tenant.Site) any { return ProtectedResource(s) })
}

// AuthorizationServer serves /.well-known/oauth-authorization-server and
// /.well-known/openid-configuration (one document, RFC 8414 §3 and OIDC
// Discovery §4 agree on its fields).
func (h *Handler) AuthorizationServer(w http.ResponseWriter, r *http.Request) {
	h.serveDoc(w, r, vocab.AuthorizationServerPath, func(s *tenant.Site) any { return AuthorizationServer(s) })
}

// JWKS serves the site's published signing keys.
func (h *Handler) JWKS(w http.ResponseWriter, r *http.Request) {
	site, ok := tenant.FromContext(r.Context())
	if !ok {
		tenant.WriteError(w, http.StatusNotFound, "not_found", "no site is served at this host")
		return
	}
	body, err := h.keys.JWKS(r.Context(), site.ID)
	if err != nil {
		h.logger.ErrorContext(r.Context(), "jwks unavailable", "err", err)
		w.Header().Set("Retry-After", "30")
		tenant.WriteError(w, http.StatusServiceUnavailable, "temporarily_unavailable", "the signing keys of this site are unavailable")
		return
	}
	// An ETag as the metadata documents have, so that clients revalidating
	// the keys every few minutes get a 304 until a rotation changes them.
	serveDocument(w, r, "application/jwk-set+json", metadataMaxAge, body)
}

// Preflight answers CORS preflights of the metadata documents: they are
// public and carry no credentials, so every origin may read them with any
// request header.
func Preflight(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS")
	h.Set("Access-Control-Allow-Headers", "*")
	h.Set("Access-Control-Max-Age", "86400")
	h.Set("Allow", "GET, HEAD, OPTIONS")
	w.WriteHeader(http.StatusNoContent)
}

// NotFound answers metadata paths that do not exist, such as the
// path-suffixed protected-resource variants (DESIGN §8): clients that probe
// them then fall back to the origin document.
func NotFound(w http.ResponseWriter, r *http.Request) {
	setPublicHeaders(w, "public, max-age=300")
	tenant.WriteError(w, http.StatusNotFound, "not_found", "no metadata document at this path; see "+vocab.ProtectedResourcePath)
}

func (h *Handler) serveDoc(w http.ResponseWriter, r *http.Request, path string, build func(*tenant.Site) any) {
	site, ok := tenant.FromContext(r.Context())
	if !ok {
		tenant.WriteError(w, http.StatusNotFound, "not_found", "no site is served at this host")
		return
	}
	doc, err := h.document(site, path, build)
	if err != nil {
		h.logger.ErrorContext(r.Context(), "metadata", "err", err)
		tenant.WriteError(w, http.StatusInternalServerError, "server_error", "metadata could not be built")
		return
	}
	setPublicHeaders(w, metadataMaxAge)
	w.Header().Set("ETag", doc.etag)
	// RFC 9110 §13.1.2: weak comparison, lists and "*", as the agent
	// documents answer.
	if etagMatches(r.Header.Values("If-None-Match"), doc.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(doc.body)
}

// document returns the serialized document of site at path, building it only
// when the site changed since it was last built.
func (h *Handler) document(site *tenant.Site, path string, build func(*tenant.Site) any) (*document, error) {
	k := docKey{site.ID, path}
	now := time.Now().UnixNano()
	h.mu.RLock()
	d, ok := h.docs[k]
	h.mu.RUnlock()
	if ok && d.version.Equal(site.UpdatedAt) {
		d.used.Store(now)
		h.hits.Add(1)
		return d, nil
	}
	h.misses.Add(1)
	body, err := json.Marshal(build(site))
	if err != nil {
		return nil, errors.Join(errors.New("discovery: marshal"), err)
	}
	sum := sha256.Sum256(body)
	d = &document{version: site.UpdatedAt, body: body, etag: `"` + base64.RawURLEncoding.EncodeToString(sum[:12]) + `"`}
	d.used.Store(now)
	h.mu.Lock()
	if old, ok := h.docs[k]; ok {
		h.bytes -= len(old.body)
		delete(h.docs, k)
	}
	for h.bytes+len(body) > maxDocBytes && len(h.docs) > 0 {
		h.evictLocked()
	}
	h.docs[k] = d
	h.bytes += len(body)
	h.mu.Unlock()
	return d, nil
}

// evictLocked drops the least recently used of a sample of eight
// documents (map iteration starts at a random place).
func (h *Handler) evictLocked() {
	var (
		victim docKey
		oldest int64
		n      int
	)
	for k, d := range h.docs {
		if u := d.used.Load(); n == 0 || u < oldest {
			victim, oldest = k, u
		}
		if n++; n == 8 {
			break
		}
	}
	h.bytes -= len(h.docs[victim].body)
	delete(h.docs, victim)
	h.evictions.Add(1)
}
func setPublicHeaders(w http.ResponseWriter, cacheControl string) {
	w.Header().Set("Cache-Control", cacheControl)
	w.Header().Set("Access-Control-Allow-Origin", "*")
}
