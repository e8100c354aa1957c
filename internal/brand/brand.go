package brand

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"html"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
	"github.com/lectern/lectern/ui"
)

// Paths of the site's stylesheet and icon.
const (
	StylesheetPath = "/brand.css"
	IconPath       = "/favicon.svg"
	// uploadsPath is where the admin API serves uploaded files (the logo),
	// from the site's own origin with the file's content type, nosniff
	// and a sandboxing CSP (adminapi.UploadsPath).
	uploadsPath = "/uploads/"
)

// Store is what the brand reads.
type Store interface {
	Appearance(ctx context.Context, site tenant.ID) (*storage.Appearance, error)
	FileRecords() storage.Records[storage.File]
}

// Look is a site's brand, ready to serve.
type Look struct {
	Colors Colors
	// CSS is the stylesheet of custom properties; Icon the SVG icon.
	CSS, Icon []byte
	// Version names this look (a hash of everything in it): the ?v= of
	// the URLs and the ETag.
	Version string
	// LogoURL is the logo's path at the site, or empty.
	LogoURL string
}

// Source builds and keeps the looks of sites. A look is kept for TTL:
// Forget drops it at once on the replica that saved the change; the
// others see it within TTL.
type Source struct {
	store  Store
	logger *slog.Logger
	ttl    time.Duration
	now    func() time.Time

	mu    sync.Mutex
	looks map[tenant.ID]cached
}

type cached struct {
	look *Look
	name string
	at   time.Time
}

// maxLooks bounds the kept looks; past it the oldest half goes.
const maxLooks = 20000

// DefaultTTL is how long a look is kept without a change being seen.
const DefaultTTL = 10 * time.Second

// New returns a Source reading store.
func New(store Store, logger *slog.Logger) *Source {
	return &Source{store: store, logger: logger, ttl: DefaultTTL, now: time.Now, looks: map[tenant.ID]cached{}}
}

// Forget drops the kept look of site (its appearance changed).
func (s *Source) Forget(site tenant.ID) {
	s.mu.Lock()
	delete(s.looks, site)
	s.mu.Unlock()
}

// Look returns the look of site.
func (s *Source) Look(ctx context.Context, site *tenant.Site) (*Look, error) {
	now := s.now()
	s.mu.Lock()
	c, ok := s.looks[site.ID]
	s.mu.Unlock()
	if ok && now.Sub(c.at) < s.ttl && c.name == site.Name {
		return c.look, nil
	}
	a, err := s.store.Appearance(ctx, site.ID)
	if errors.Is(err, storage.ErrNotFound) {
		a, err = storage.DefaultAppearance(site.ID), nil
	}
	if err != nil {
		return nil, err
	}
	logo := ""
	if a.LogoFileID != nil {
		f, err := s.store.FileRecords().Get(ctx, site.ID, *a.LogoFileID)
		switch {
		case errors.Is(err, storage.ErrNotFound):
		case err != nil:
			return nil, err
		case strings.HasPrefix(f.ContentType, "image/"):
			logo = uploadsPath + f.Key
		}
	}
	look := build(site.Name, Colors{Primary: a.PrimaryColor, Accent: a.AccentColor, Background: a.BackgroundColor, Text: a.TextColor}, logo)
	s.mu.Lock()
	if len(s.looks) >= maxLooks {
		s.evict()
	}
	s.looks[site.ID] = cached{look: look, name: site.Name, at: now}
	s.mu.Unlock()
	return look, nil
}

// evict drops the older half of the kept looks; s.mu is held.
func (s *Source) evict() {
	var sum time.Duration
	base := s.now()
	for _, c := range s.looks {
		sum += base.Sub(c.at)
	}
	mean := sum / time.Duration(max(1, len(s.looks)))
	for id, c := range s.looks {
		if base.Sub(c.at) >= mean {
			delete(s.looks, id)
		}
	}
}

// Brand implements ui.BrandSource: the URLs a page of r's site links.
// While the store cannot say, pages wear the shared look.
func (s *Source) Brand(r *http.Request) ui.Brand {
	site, ok := tenant.FromContext(r.Context())
	if !ok {
		return ui.Brand{}
	}
	look, err := s.Look(r.Context(), site)
	if err != nil {
		s.logger.WarnContext(r.Context(), "site brand unavailable; the page has the shared look", "err", err)
		return ui.Brand{}
	}
	b := ui.Brand{StylesheetURL: StylesheetPath + "?v=" + look.Version, IconURL: IconPath + "?v=" + look.Version, LogoURL: look.LogoURL}
	return b
}

// ServeStylesheet serves GET /brand.css: the site's custom properties.
func (s *Source) ServeStylesheet(w http.ResponseWriter, r *http.Request) {
	s.serve(w, r, "text/css; charset=utf-8", func(l *Look) []byte { return l.CSS })
}

// ServeIcon serves GET /favicon.svg: the site's icon, its initial on its
// primary colour.
func (s *Source) ServeIcon(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; sandbox")
	s.serve(w, r, "image/svg+xml", func(l *Look) []byte { return l.Icon })
}

// serve answers with part of the site's look: cached for a year when the
// URL names the current version (a change makes a new URL), else for a
// minute; revalidated with the ETag.
func (s *Source) serve(w http.ResponseWriter, r *http.Request, contentType string, part func(*Look) []byte) {
	site, ok := tenant.FromContext(r.Context())
	if !ok {
		http.NotFound(w, r)
		return
	}
	look, err := s.Look(r.Context(), site)
	if err != nil {
		s.logger.WarnContext(r.Context(), "site brand unavailable", "err", err)
		w.Header().Set("Retry-After", "5")
		http.Error(w, "temporarily unavailable", http.StatusServiceUnavailable)
		return
	}
	h := w.Header()
	etag := `"` + look.Version + `"`
	h.Set("ETag", etag)
	h.Set("X-Content-Type-Options", "nosniff")
	if r.URL.Query().Get("v") == look.Version {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "public, max-age=60")
	}
	if inm := r.Header.Get("If-None-Match"); inm != "" && (inm == etag || inm == "W/"+etag || inm == "*") {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	body := part(look)
	h.Set("Content-Type", contentType)
	h.Set("Content-Length", fmt.Sprint(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// build makes the look of a site named name.
func build(name string, c Colors, logo string) *Look {
	bg := mix(c.Primary, c.Background, 0.06)
	if Contrast(c.Text, bg) < MinContrast || Contrast(c.Background, c.Primary) < MinContrast {
		bg = c.Background
	}
	muted := mix(c.Text, c.Background, 0.78)
	if Contrast(muted, c.Background) < MinContrast || Contrast(muted, bg) < MinContrast {
		muted = c.Text
	}
	line := mix(c.Text, c.Background, 0.22)
	var css bytes.Buffer
	fmt.Fprintf(&css, `/* The brand of this site, from its appearance (PUT /api/v1/appearance).
   Custom properties only: the rules are the shared /static/lectern.css. */
:root {
  --ink: %[1]s; --muted: %[2]s; --line: %[3]s; --bg: %[4]s; --card: %[5]s;
  --accent: %[6]s; --accent-ink: %[5]s; --brand-accent: %[7]s;
}
`, c.Text, muted, line, bg, c.Background, c.Primary, c.Accent)
	initial := "L"
	for _, r := range name {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			initial = string(unicode.ToUpper(r))
			break
		}
	}
	if !utf8.ValidString(initial) {
		initial = "L"
	}
	icon := fmt.Sprintf(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64"><rect width="64" height="64" rx="14" fill="%s"/>`+
		`<text x="32" y="44" font-family="system-ui, sans-serif" font-size="36" font-weight="700" text-anchor="middle" fill="%s">%s</text></svg>`,
		c.Primary, c.Background, html.EscapeString(initial))
	sum := sha256.New()
	sum.Write(css.Bytes())
	sum.Write([]byte(icon))
	sum.Write([]byte(logo))
	return &Look{Colors: c, CSS: css.Bytes(), Icon: []byte(icon), Version: hex.EncodeToString(sum.Sum(nil))[:16], LogoURL: logo}
}
