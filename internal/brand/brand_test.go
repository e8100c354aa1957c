package brand

import (
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/storage/sqlstore/sqltest"
	"github.com/lectern/lectern/tenant"
)

func TestContrast(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want float64
	}{
		{"#000000", "#ffffff", 21},
		{"#ffffff", "#ffffff", 1},
		{"#777777", "#ffffff", 4.48}, // the classic grey that just fails AA
		{"#1f6feb", "#ffffff", 4.63},
		{"#ffffff", "#1f6feb", 4.63}, // symmetric
	} {
		if got := Contrast(c.a, c.b); math.Abs(got-c.want) > 0.01 {
			t.Errorf("Contrast(%s, %s) = %.3f; want %.2f", c.a, c.b, got, c.want)
		}
	}
}

func TestCheckNamesThePair(t *testing.T) {
	def := storage.DefaultAppearance(1)
	if e := Check(Colors{def.PrimaryColor, def.AccentColor, def.BackgroundColor, def.TextColor}); e != nil {
		t.Fatalf("the default appearance fails its own check: %v", e)
	}
	e := Check(Colors{Primary: "#1f6feb", Accent: "#f2a900", Background: "#ffffff", Text: "#bbbbbb"})
	if e == nil || e.Pair.Foreground != "textColor" || e.Pair.Background != "backgroundColor" || e.Ratio != 1.91 {
		t.Errorf("light grey text: %+v; want textColor/backgroundColor at 1.91", e)
	}
	e = Check(Colors{Primary: "#ffcc00", Accent: "#000000", Background: "#ffffff", Text: "#111111"})
	if e == nil || e.Pair.Foreground != "backgroundColor" || e.Pair.Background != "primaryColor" {
		t.Errorf("yellow buttons with white labels: %+v; want backgroundColor/primaryColor", e)
	}
	if !strings.Contains(e.Error(), "4.5:1") {
		t.Errorf("message %q does not say what is needed", e.Error())
	}
	// The accent is decoration: a pale accent is accepted.
	if e := Check(Colors{Primary: "#0b5cad", Accent: "#fff5d6", Background: "#ffffff", Text: "#1b1f24"}); e != nil {
		t.Errorf("a pale accent was refused: %v", e)
	}
}

// The stylesheet carries the site's colours, is cached for a year under
// its versioned URL, revalidates with its ETag, and changes (with a new
// version) when the appearance changes.
func TestStylesheet(t *testing.T) {
	store := sqltest.SQLite(t)
	ctx := t.Context()
	var sites []*tenant.Site
	for _, n := range []string{"atelier", "bakery"} {
		s := &storage.Site{Slug: n, Name: n, Origin: "http://" + n + ".test", RegistrationVariant: tenant.VariantOpen}
		if err := store.CreateSite(ctx, s); err != nil {
			t.Fatal(err)
		}
		sites = append(sites, s.Tenant())
	}
	a, b := sites[0], sites[1]
	save := func(primary, bg, text string) {
		t.Helper()
		if err := store.SaveAppearance(ctx, &storage.Appearance{SiteID: a.ID, PrimaryColor: primary, AccentColor: "#e0a000", BackgroundColor: bg, TextColor: text}); err != nil {
			t.Fatal(err)
		}
	}
	save("#7a1f5c", "#fffdf7", "#2b2118")
	src := New(store, slog.New(slog.NewTextHandler(io.Discard, nil)))
	get := func(site *tenant.Site, target string, hdr ...string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodGet, target, nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			r.Header.Set(hdr[i], hdr[i+1])
		}
		r = r.WithContext(tenant.WithSite(r.Context(), site))
		w := httptest.NewRecorder()
		src.ServeStylesheet(w, r)
		return w
	}
	ra := httptest.NewRequest(http.MethodGet, "/login", nil)
	brandA := src.Brand(ra.WithContext(tenant.WithSite(ra.Context(), a)))
	rb := httptest.NewRequest(http.MethodGet, "/login", nil)
	brandB := src.Brand(rb.WithContext(tenant.WithSite(rb.Context(), b)))
	if brandA.StylesheetURL == brandB.StylesheetURL || !strings.HasPrefix(brandA.StylesheetURL, "/brand.css?v=") {
		t.Fatalf("stylesheet URLs %q and %q: want distinct versioned URLs", brandA.StylesheetURL, brandB.StylesheetURL)
	}
	w := get(a, brandA.StylesheetURL)
	if w.Code != 200 || !strings.Contains(w.Body.String(), "--accent: #7a1f5c") || !strings.Contains(w.Body.String(), "--ink: #2b2118") {
		t.Fatalf("site A's stylesheet: %d %s", w.Code, w.Body)
	}
	if cc := w.Header().Get("Cache-Control"); cc != "public, max-age=31536000, immutable" {
		t.Errorf("versioned URL cached as %q", cc)
	}
	if ct := w.Header().Get("Content-Type"); ct != "text/css; charset=utf-8" {
		t.Errorf("content type %q", ct)
	}
	etag := w.Header().Get("ETag")
	if w := get(a, "/brand.css", "If-None-Match", etag); w.Code != http.StatusNotModified {
		t.Errorf("revalidation with the ETag: %d; want 304", w.Code)
	}
	if w := get(a, "/brand.css?v=old"); w.Header().Get("Cache-Control") != "public, max-age=60" {
		t.Errorf("an old version is cached as %q; want a minute", w.Header().Get("Cache-Control"))
	}
	if w := get(b, "/brand.css"); strings.Contains(w.Body.String(), "#7a1f5c") {
		t.Error("site B's stylesheet carries site A's colours")
	}
	save("#0f5132", "#ffffff", "#111111")
	src.Forget(a.ID)
	w2 := get(a, "/brand.css")
	if w2.Header().Get("ETag") == etag || !strings.Contains(w2.Body.String(), "#0f5132") {
		t.Errorf("after a change: ETag %s (was %s), body %s", w2.Header().Get("ETag"), etag, w2.Body)
	}
}
