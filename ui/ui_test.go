package ui

import (
	"html"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/lectern/lectern/authserver/scope"
	"github.com/lectern/lectern/i18n"
)

// Every template of the sign-in pages goes through the catalogs: no text
// a person reads is written into a template, and every key it uses exists.
func TestTemplatesAreTranslated(t *testing.T) {
	problems, n, err := i18n.CheckFiles(TemplateFS(), "templates/*.html")
	if err != nil {
		t.Fatal(err)
	}
	if n < 6 {
		t.Fatalf("checked %d templates; want the six of the sign-in pages", n)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// The consent page translates each scope's wording through its key.
func TestEveryScopeIsTranslated(t *testing.T) {
	for _, s := range scope.All() {
		if !i18n.Has(i18n.Default, s.Key()) {
			t.Errorf("scope %s: no message %q", s.Name, s.Key())
			continue
		}
		if got := i18n.T("en", s.Key()); got != s.Description {
			t.Errorf("scope %s: the catalog says %q; the scope says %q", s.Name, got, s.Description)
		}
	}
}

// Pages are bound to a language on first use: rendered at once in every
// language, each answer is in its own language (the t function of another
// language never leaks into it), and an unsupported page is a 500, not a
// panic.
func TestRenderBindsEachLanguage(t *testing.T) {
	r, err := NewRenderer(slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 4 {
		for _, lang := range i18n.Languages {
			wg.Go(func() {
				req := httptest.NewRequest(http.MethodGet, "/", nil)
				req.Header.Set("Accept-Language", lang)
				w := httptest.NewRecorder()
				r.Render(w, req, http.StatusBadRequest, "error", Page{Title: "error.title", Data: map[string]any{"Message": "m", "Code": "x"}})
				body := w.Body.String()
				want := html.EscapeString(i18n.T(lang, "error.close"))
				if w.Code != http.StatusBadRequest || w.Header().Get("Content-Language") != lang ||
					!strings.Contains(body, `<html lang="`+lang+`">`) || !strings.Contains(body, want) {
					t.Errorf("%s: %d, Content-Language %q; body has %q: %v", lang, w.Code, w.Header().Get("Content-Language"), want, strings.Contains(body, want))
				}
			})
		}
	}
	wg.Wait()
	w := httptest.NewRecorder()
	r.Render(w, httptest.NewRequest(http.MethodGet, "/", nil), http.StatusOK, "no-such-page", Page{})
	if w.Code != http.StatusInternalServerError {
		t.Fatalf("an unknown page: %d, want 500", w.Code)
	}
}

// Pages are parsed on first use, but a page that does not parse still
// stops the renderer at start, and a page overridden by a later file
// system renders from that one.
func TestNewRendererChecksEveryPage(t *testing.T) {
	broken := fstest.MapFS{"templates/oops.html": {Data: []byte(`{{define "content"}}{{if}}{{end}}`)}}
	if _, err := NewRenderer(slog.New(slog.DiscardHandler), broken); err == nil || !strings.Contains(err.Error(), "oops") {
		t.Fatalf("NewRenderer with a broken page: err = %v; want a parse error naming oops.html", err)
	}
	extra := fstest.MapFS{"templates/hello.html": {Data: []byte(`{{define "content"}}<p id="hello">{{t "common.continue"}}</p>{{end}}`)}}
	r, err := NewRenderer(slog.New(slog.DiscardHandler), extra)
	if err != nil {
		t.Fatal(err)
	}
	for lang, want := range map[string]string{"en": "Continue", "de": i18n.T("de", "common.continue")} {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.AddCookie(&http.Cookie{Name: i18n.CookieName, Value: lang})
		rec := httptest.NewRecorder()
		r.Render(rec, req, http.StatusOK, "hello", Page{Title: "x"})
		if body := rec.Body.String(); rec.Code != http.StatusOK || !strings.Contains(body, `<p id="hello">`+want+`</p>`) {
			t.Errorf("%s: status %d, body lacks the page's own content %q", lang, rec.Code, want)
		}
	}
}

// The language links come back to the page, but they neither repeat a
// long address once per language (a 20 KB query made an 80 KB error
// page) nor copy a single-use token of a reset, invitation or
// confirmation link (audit L, finding 7b).
func TestLanguageLinksBoundTheReturn(t *testing.T) {
	r, err := NewRenderer(slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	render := func(method, target string) string {
		t.Helper()
		w := httptest.NewRecorder()
		r.Render(w, httptest.NewRequest(method, target, nil), http.StatusBadRequest, "error", Page{Title: "error.title", Data: map[string]any{"Message": "m", "Code": "x"}})
		return w.Body.String()
	}
	links := func(body string) []string {
		t.Helper()
		var out []string
		for _, part := range strings.Split(body, `href="`+LanguagePath+`?`)[1:] {
			end := strings.IndexByte(part, '"')
			out = append(out, html.UnescapeString(part[:end]))
		}
		if len(out) != len(i18n.Languages) {
			t.Fatalf("%d language links; want %d", len(out), len(i18n.Languages))
		}
		return out
	}
	returnTo := func(link string) string {
		q, err := url.ParseQuery(link)
		if err != nil {
			t.Fatal(err)
		}
		return q.Get("return_to")
	}

	// An ordinary page comes back with its query.
	for _, l := range links(render(http.MethodGet, "/login?auth_request=abc&step_up=1")) {
		if got := returnTo(l); got != "/login?auth_request=abc&step_up=1" {
			t.Errorf("return_to %q; want the page with its query", got)
		}
	}
	// A token is never copied; the rest of the query is.
	const secret = "SECRETtokenVALUE0123456789abcdefghijklmnopq"
	for _, target := range []string{"/password/reset?token=" + secret, "/invitations/accept?token=" + secret + "&x=1", "/email/confirm?%74oken=" + secret} {
		body := render(http.MethodGet, target)
		if strings.Contains(body, secret) {
			t.Errorf("%s: the page repeats the token", target)
		}
		for _, l := range links(body) {
			if got := returnTo(l); strings.Contains(got, "token") || !strings.HasPrefix(got, target[:strings.IndexByte(target, '?')]) {
				t.Errorf("%s: return_to %q; want the path without the token", target, got)
			}
		}
	}
	// A long query is not repeated: the links come back to the path.
	small := len(render(http.MethodGet, "/password/reset"))
	long := strings.Repeat("A", 20000)
	for _, target := range []string{"/password/reset?token=" + long, "/consent?auth_request=" + long, "/login?return_to=/" + long + "&auth_request=x"} {
		body := render(http.MethodGet, target)
		if strings.Contains(body, strings.Repeat("A", 100)) || len(body) > small+4*len(target[:strings.IndexByte(target, '?')]) {
			t.Errorf("%s: a page of %d bytes (%d for the bare page); the query is repeated", target[:20], len(body), small)
		}
		for _, l := range links(body) {
			if got, want := returnTo(l), target[:strings.IndexByte(target, '?')]; got != want {
				t.Errorf("return_to %q; want %q", got, want)
			}
		}
	}
	// A path that long has no return_to at all.
	for _, l := range links(render(http.MethodGet, "/"+long)) {
		if strings.Contains(l, "return_to") {
			t.Errorf("a %d-byte path: link %.80q carries it", len(long), l)
		}
	}
}
