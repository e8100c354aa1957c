package ui

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"html"
	"html/template"
	"io/fs"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/lectern/lectern/i18n"
	"github.com/lectern/lectern/tenant"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// TemplateFS is the embedded templates of this package, for the tests
// that check every template goes through the catalogs.
func TemplateFS() fs.FS { return templateFS }

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
	// Title is the document title and main heading: a message ID of the
	// catalogs (translated when rendered) or text already translated.
	Title string
	// TitleArgs are the placeholders of a Title that is a message ID.
	TitleArgs []any
	// SiteName names the school in the header and the title. Empty: the
	// site of the request.
	SiteName string
	// CSRF is the anti-forgery token of the page's forms.
	CSRF string
	// Flash is a one-time message (success or error) shown above the content.
	Flash *Flash
	// Data is the page's own content.
	Data any

	// Set by Render:

	// Lang is the page's language (<html lang>).
	Lang string
	// Brand is the site's look.
	Brand Brand
	// Languages are the choices of the language selector.
	Languages []Language
}

// Language is a choice of the language selector.
type Language struct {
	Code, Name, URL string
	Current         bool
}

// Brand is what a page needs of the site's appearance: the URLs of its
// stylesheet (versioned, so it can be cached for long), its logo and its
// icon. Empty fields: the shared look.
type Brand struct {
	StylesheetURL string
	LogoURL       string
	IconURL       string
}

// BrandSource gives the brand of the site of a request.
type BrandSource interface {
	Brand(r *http.Request) Brand
}

// Flash is a one-time message.
type Flash struct {
	Kind    string // "ok" or "error"
	Message string
}

// Renderer renders the embedded templates.
type Renderer struct {
	// sources names, for each page, the file system that holds it. A page
	// is parsed for a language, with the t function bound to that
	// language, the first time it is rendered in it (pages): a replica
	// keeps parse trees only of the pages its visitors see, in the
	// languages they read. NewRenderer parses every page once, so a
	// broken template still fails at start, and keeps none of it (the
	// parse trees of every page, kept to clone from, were 2 MB of a 10 MB
	// live heap, five times that in RSS with GOGC=400).
	sources map[string]fs.FS
	pages   map[string]*sync.Map // language -> page name -> *template.Template
	mu      sync.Mutex           // serialises the parsing
	logger  *slog.Logger
	brand   BrandSource
}

// Funcs are the template functions every page (and the template checks)
// may use. t is replaced per language.
func baseFuncs() template.FuncMap {
	return template.FuncMap{
		"join":     strings.Join,
		"t":        func(string, ...any) template.HTML { return "" },
		"tn":       func(string, int, ...any) template.HTML { return "" },
		"tr":       func(s string) string { return s },
		"date":     func(time.Time) string { return "" },
		"datetime": func(time.Time) string { return "" },
		"ago":      func(time.Time, time.Time) string { return "" },
		"in":       func(time.Time, time.Time) string { return "" },
	}
}

// langFuncs binds the translating functions to lang. Messages are trusted
// (they come from our catalogs and may carry markup such as <strong>);
// the values put into them are escaped.
func langFuncs(lang string) template.FuncMap {
	return template.FuncMap{
		"t": func(id string, args ...any) template.HTML {
			return template.HTML(i18n.T(lang, id, escapeArgs(args)...))
		},
		"tn": func(id string, n int, args ...any) template.HTML {
			return template.HTML(i18n.TN(lang, id, n, escapeArgs(args)...))
		},
		// tr translates a value that may be a message ID (a title, a
		// message a handler chose) and leaves other text as it is.
		"tr":       func(s string) string { return i18n.Text(lang, s) },
		"date":     func(t time.Time) string { return i18n.Date(lang, t) },
		"datetime": func(t time.Time) string { return i18n.DateTime(lang, t) },
		"ago":      func(now, t time.Time) string { return i18n.Ago(lang, now, t) },
		"in":       func(now, t time.Time) string { return i18n.In(lang, now, t) },
	}
}

func escapeArgs(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		if i%2 == 1 {
			if h, ok := a.(template.HTML); ok {
				out[i] = string(h)
				continue
			}
			out[i] = html.EscapeString(toString(a))
			continue
		}
		out[i] = a
	}
	return out
}

func toString(a any) string {
	switch v := a.(type) {
	case string:
		return v
	case nil:
		return ""
	default:
		return template.HTMLEscaper(v)
	}
}

// NewRenderer finds the page templates (templates/*.html of this package
// and of extra, each drawn in the base layout) and checks that each
// parses.
func NewRenderer(logger *slog.Logger, extra ...fs.FS) (*Renderer, error) {
	sources := map[string]fs.FS{}
	for _, src := range append([]fs.FS{templateFS}, extra...) {
		names, err := fs.Glob(src, "templates/*.html")
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			name := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
			if name == "base" {
				continue
			}
			sources[name] = src
		}
	}
	r := &Renderer{sources: sources, pages: make(map[string]*sync.Map, len(i18n.Languages)), logger: logger}
	for _, lang := range i18n.Languages {
		r.pages[lang] = new(sync.Map)
	}
	for name := range sources {
		if _, err := r.parse(name, baseFuncs()); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// parse parses page name in the base layout with funcs.
func (r *Renderer) parse(name string, funcs template.FuncMap) (*template.Template, error) {
	src, ok := r.sources[name]
	if !ok {
		return nil, errors.New("unknown page template")
	}
	t, err := template.New("base.html").Funcs(funcs).ParseFS(templateFS, "templates/base.html")
	if err != nil {
		return nil, err
	}
	return t.ParseFS(src, "templates/"+name+".html")
}

// page returns page name bound to lang, parsing it on its first use.
func (r *Renderer) page(lang, name string) (*template.Template, error) {
	set, ok := r.pages[lang]
	if !ok {
		return nil, fmt.Errorf("unsupported language %q", lang)
	}
	if t, ok := set.Load(name); ok {
		return t.(*template.Template), nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if t, ok := set.Load(name); ok {
		return t.(*template.Template), nil
	}
	funcs := baseFuncs()
	maps.Copy(funcs, langFuncs(lang))
	t, err := r.parse(name, funcs)
	if err != nil {
		return nil, err
	}
	set.Store(name, t)
	return t, nil
}

// WithBrand makes the renderer dress every page in the brand of its site.
func (r *Renderer) WithBrand(b BrandSource) *Renderer {
	r.brand = b
	return r
}

// LanguagePath is where the language selector sends its choice.
const LanguagePath = "/language"

// Render writes page name with status. Pages are never framed, cached or
// sniffed: they carry forms and secrets (DESIGN §9, clickjacking defence).
func (r *Renderer) Render(w http.ResponseWriter, req *http.Request, status int, name string, p Page) {
	siteDefault := ""
	if site, ok := tenant.FromContext(req.Context()); ok {
		siteDefault = site.Locale
		if p.SiteName == "" {
			p.SiteName = site.Name
		}
	}
	p.Lang = i18n.Resolve(req, siteDefault)
	t, err := r.page(p.Lang, name)
	if err != nil {
		r.logger.ErrorContext(req.Context(), "page template", "page", name, "lang", p.Lang, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	if len(p.TitleArgs) > 0 {
		p.Title = i18n.T(p.Lang, p.Title, p.TitleArgs...)
	} else {
		p.Title = i18n.Text(p.Lang, p.Title)
	}
	if p.Flash != nil {
		p.Flash = &Flash{Kind: p.Flash.Kind, Message: i18n.Text(p.Lang, p.Flash.Message)}
	}
	if r.brand != nil {
		p.Brand = r.brand.Brand(req)
	}
	p.Languages = languages(req, p.Lang)
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "base.html", p); err != nil {
		r.logger.ErrorContext(req.Context(), "render page", "page", name, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Language", p.Lang)
	h.Set("Vary", "Accept-Language, Cookie")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'; form-action 'self' http: https:; base-uri 'none'; object-src 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// languages are the selector's links: each sets the language and comes
// back to this page (languageReturn).
func languages(req *http.Request, current string) []Language {
	back := languageReturn(req)
	out := make([]Language, 0, len(i18n.Languages))
	for _, l := range i18n.Languages {
		q := url.Values{"lang": {l}}
		if back != "" {
			q.Set("return_to", back)
		}
		out = append(out, Language{Code: l, Name: i18n.Name(l), URL: LanguagePath + "?" + q.Encode(), Current: l == current})
	}
	return out
}

// maxLanguageReturn bounds the address each language link carries back to
// the page: every page has one link per language, so a long query (any
// request can send 20 KB) would be repeated that many times.
const maxLanguageReturn = 512

// languageReturn is where the language links come back to: the page's
// path and, for a GET, its query without the "token" parameter (the
// single-use tokens of the reset, invitation and confirmation links are
// not copied into links; the person opens their link again). A query
// that does not parse is left out; an address longer than
// maxLanguageReturn is cut to the path, and a path that long to nothing
// (the language page's default).
func languageReturn(req *http.Request) string {
	back := req.URL.Path
	if req.Method == http.MethodGet && req.URL.RawQuery != "" {
		q := req.URL.RawQuery
		switch vals, err := url.ParseQuery(q); {
		case err != nil:
			q = ""
		case vals.Has("token"):
			vals.Del("token")
			q = vals.Encode()
		}
		if q != "" {
			back += "?" + q
		}
	}
	if len(back) > maxLanguageReturn {
		back = req.URL.Path
	}
	if len(back) > maxLanguageReturn {
		return ""
	}
	return back
}

// LocalPath reports whether s is a path on this origin that is safe to
// return to ("/x", never "//host" or "/\host").
func LocalPath(s string) bool {
	if s == "" || s[0] != '/' || strings.HasPrefix(s, "//") || strings.HasPrefix(s, "/\\") || strings.ContainsAny(s, "\r\n\\") {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && u.Scheme == "" && u.Host == ""
}
