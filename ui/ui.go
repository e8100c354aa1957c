package ui

import (
	"bytes"
	"embed"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Static serves the embedded stylesheet and scripts under /static/.
func Static() http.Handler {
	sub, _ := fs.Sub(staticFS, "static")
	fsrv := http.StripPrefix("/static/", http.FileServer(http.FS(sub)))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		fsrv.ServeHTTP(w, r)
	})
}

// Page is what every template gets.
type Page struct {
	// Title is the document title and main heading.
	Title string
	// SiteName names the school in the header.
	SiteName string
	// CSRF is the anti-forgery token of the page's forms.
	CSRF string
	// Flash is a one-time message (success or error) shown above the content.
	Flash *Flash
	// Data is the page's own content.
	Data any
}

// Flash is a one-time message.
type Flash struct {
	Kind    string // "ok" or "error"
	Message string
}

// Renderer renders the embedded templates.
type Renderer struct {
	pages  map[string]*template.Template
	logger *slog.Logger
}

// NewRenderer parses every page template with the base layout.
func NewRenderer(logger *slog.Logger, extra ...fs.FS) (*Renderer, error) {
	funcs := template.FuncMap{
		"join": strings.Join,
	}
	base, err := template.New("base.html").Funcs(funcs).ParseFS(templateFS, "templates/base.html")
	if err != nil {
		return nil, err
	}
	r := &Renderer{pages: map[string]*template.Template{}, logger: logger}
	sources := append([]fs.FS{templateFS}, extra...)
	for _, src := range sources {
		names, err := fs.Glob(src, "templates/*.html")
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			name := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
			if name == "base" {
				continue
			}
			t, err := template.Must(base.Clone()).ParseFS(src, n)
			if err != nil {
				return nil, err
			}
			r.pages[name] = t
		}
	}
	return r, nil
}

// Render writes page name with status. Pages are never framed, cached or
// sniffed: they carry forms and secrets (DESIGN §9, clickjacking defence).
func (r *Renderer) Render(w http.ResponseWriter, req *http.Request, status int, name string, p Page) {
	t, ok := r.pages[name]
	if !ok {
		r.logger.ErrorContext(req.Context(), "unknown page template", "page", name)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "base.html", p); err != nil {
		r.logger.ErrorContext(req.Context(), "render page", "page", name, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'; form-action 'self' http: https:; base-uri 'none'; object-src 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}
