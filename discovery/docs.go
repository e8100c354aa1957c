package discovery

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/lectern/lectern/limits"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
	"github.com/lectern/lectern/vocab"
)

// DocsStore is what the agent documents read: a site's published catalog.
// Drafts and non-public events never come out of it (storage.CatalogStore).
type DocsStore interface {
	Offerings(ctx context.Context, site tenant.ID, now time.Time) (*storage.Offerings, error)
	CourseBySlug(ctx context.Context, site tenant.ID, slug string) (*storage.CourseDetail, error)
}

var _ DocsStore = (storage.CatalogStore)(nil)

// DocsOptions configures NewDocs. Store is required.
type DocsOptions struct {
	Store DocsStore
	// MCPTools are the MCP server's tools, for /auth.md.
	MCPTools []vocab.MCPTool
	// Logger receives storage failures. Default: discard.
	Logger *slog.Logger
	// Now is the clock (which events are upcoming). Default time.Now.
	Now func() time.Time
	// Limits are the platform's limits, whose values at the site /auth.md
	// states. Nil: the built-in defaults.
	Limits *limits.Config
}

// Docs serves the agent documents of the request's site: /auth.md,
// /llms.txt (llmstxt.org), /pricing.md and /courses/<slug>.md. Each is
// generated from the resolved site and its published catalog, so every site
// gets its own; each answer carries an ETag over its body (If-None-Match →
// 304) and Cache-Control.
type Docs struct {
	store  DocsStore
	tools  []vocab.MCPTool
	logger *slog.Logger
	now    func() time.Time
	limits *limits.Config
}

// NewDocs returns a Docs. It panics without a Store (a wiring mistake).
func NewDocs(o DocsOptions) *Docs {
	if o.Store == nil {
		panic("discovery: NewDocs needs DocsOptions.Store")
	}
	d := &Docs{store: o.Store, tools: o.MCPTools, logger: o.Logger, now: o.Now, limits: o.Limits}
	if d.logger == nil {
		d.logger = slog.New(slog.DiscardHandler)
	}
	if d.now == nil {
		d.now = time.Now
	}
	return d
}

// Cache lifetimes. /auth.md changes only with the site's settings, as the
// metadata does; the catalog documents follow publishing within a minute.
const (
	authMDMaxAge  = "public, max-age=300"
	catalogMaxAge = "public, max-age=60"
)

// Content types of the documents.
const (
	markdownType = "text/markdown; charset=utf-8"
	plainType    = "text/plain; charset=utf-8"
)

// AuthMD serves /auth.md, the authentication walkthrough of the site.
func (d *Docs) AuthMD(w http.ResponseWriter, r *http.Request) {
	site, ok := docsSite(w, r)
	if !ok {
		return
	}
	serveDocument(w, r, markdownType, authMDMaxAge, authMarkdown(site, d.tools, d.limits))
}

// LLMSTxt serves /llms.txt (https://llmstxt.org): the site's name, a
// summary, and links to its courses, pricing and agent documents.
func (d *Docs) LLMSTxt(w http.ResponseWriter, r *http.Request) {
	d.catalogDocument(w, r, plainType, llmsText)
}

// PricingMD serves /pricing.md: everything the site sells, published items
// only.
func (d *Docs) PricingMD(w http.ResponseWriter, r *http.Request) {
	d.catalogDocument(w, r, markdownType, pricingMarkdown)
}

// catalogDocument serves a document rendered from the site's published
// offerings.
func (d *Docs) catalogDocument(w http.ResponseWriter, r *http.Request, contentType string, render func(*tenant.Site, *storage.Offerings) []byte) {
	site, ok := docsSite(w, r)
	if !ok {
		return
	}
	o, ok := d.offerings(w, r, site)
	if !ok {
		return
	}
	serveDocument(w, r, contentType, catalogMaxAge, render(site, o))
}

// CourseMD serves /courses/<slug>.md for a published course; any other path
// under /courses, and a draft, is 404.
func (d *Docs) CourseMD(w http.ResponseWriter, r *http.Request) {
	site, ok := docsSite(w, r)
	if !ok {
		return
	}
	slug, ok := strings.CutPrefix(r.URL.Path, vocab.CoursesPath+"/")
	if ok {
		slug, ok = strings.CutSuffix(slug, ".md")
	}
	if !ok || !validSlug(slug) {
		docsNotFound(w)
		return
	}
	c, err := d.store.CourseBySlug(r.Context(), site.ID, slug)
	if errors.Is(err, storage.ErrNotFound) {
		docsNotFound(w)
		return
	}
	if err != nil {
		d.unavailable(w, r, err)
		return
	}
	serveDocument(w, r, markdownType, catalogMaxAge, courseMarkdown(site, c))
}

func (d *Docs) offerings(w http.ResponseWriter, r *http.Request, site *tenant.Site) (*storage.Offerings, bool) {
	o, err := d.store.Offerings(r.Context(), site.ID, d.now())
	if err != nil {
		d.unavailable(w, r, err)
		return nil, false
	}
	return o, true
}

func (d *Docs) unavailable(w http.ResponseWriter, r *http.Request, err error) {
	d.logger.ErrorContext(r.Context(), "agent document", "path", r.URL.Path, "err", err)
	w.Header().Set("Retry-After", "5")
	tenant.WriteError(w, http.StatusServiceUnavailable, "temporarily_unavailable", "the catalog is unavailable; try again shortly")
}

func docsSite(w http.ResponseWriter, r *http.Request) (*tenant.Site, bool) {
	site, ok := tenant.FromContext(r.Context())
	if !ok {
		tenant.WriteError(w, http.StatusNotFound, "not_found", "no site is served at this host")
	}
	return site, ok
}

func docsNotFound(w http.ResponseWriter) {
	tenant.WriteError(w, http.StatusNotFound, "not_found", "no published course at this path; see "+vocab.LLMSTxtPath)
}

// validSlug reports whether s can be a course slug: lower-case letters,
// digits and hyphens, at most 120 bytes (the column size).
func validSlug(s string) bool {
	if s == "" || len(s) > 120 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// serveDocument writes body with its ETag (a hash of the body, so it changes
// exactly when the document does) or 304 when the client has it already.
func serveDocument(w http.ResponseWriter, r *http.Request, contentType, cacheControl string, body []byte) {
	sum := sha256.Sum256(body)
	etag := `"` + base64.RawURLEncoding.EncodeToString(sum[:12]) + `"`
	h := w.Header()
	setPublicHeaders(w, cacheControl)
	h.Set("ETag", etag)
	if etagMatches(r.Header.Values("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", contentType)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	_, _ = w.Write(body)
}

// etagMatches implements If-None-Match's weak comparison (RFC 9110
// §13.1.2): a list of entity tags, or "*".
func etagMatches(headers []string, etag string) bool {
	for _, v := range headers {
		for _, t := range strings.Split(v, ",") {
			t = strings.TrimSpace(t)
			if t == "*" || strings.TrimPrefix(t, "W/") == etag {
				return true
			}
		}
	}
	return false
}

// doc is a small Markdown writer.
type doc struct{ bytes.Buffer }

func (b *doc) line(parts ...string) {
	for _, p := range parts {
		b.WriteString(p)
	}
	b.WriteByte('\n')
}

// table writes a Markdown table: the header, the delimiter row, then a row
// per entry of rows. Cells are Markdown already (mdText escapes text).
func (b *doc) table(header []string, rows ...[]string) {
	b.row(header)
	b.line("|", strings.Repeat("---|", len(header)))
	for _, r := range rows {
		b.row(r)
	}
}

func (b *doc) row(cells []string) { b.line("| ", strings.Join(cells, " | "), " |") }

// tableOf is table with a row per item.
func tableOf[T any](b *doc, header []string, items []T, row func(*T) []string) {
	rows := make([][]string, len(items))
	for i := range items {
		rows[i] = row(&items[i])
	}
	b.table(header, rows...)
}
