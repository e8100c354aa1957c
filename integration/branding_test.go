package integration

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lectern/lectern/internal/brand"
	"github.com/lectern/lectern/internal/demo"
	"github.com/lectern/lectern/internal/oauthtest"
)

// brandStylesheet is the link to the site's stylesheet on a page.
var brandStylesheet = regexp.MustCompile(`<link rel="stylesheet" href="(/brand\.css\?v=[0-9a-f]+)">`)

// brandOf returns the versioned stylesheet URL a page of origin links, and
// the stylesheet itself.
func brandOf(t *testing.T, ts *testServer, origin string) (link, css string, hdr http.Header) {
	t.Helper()
	code, _, body := ts.get(t, origin, "/login")
	if code != http.StatusOK {
		t.Fatalf("GET %s/login: %d", origin, code)
	}
	m := brandStylesheet.FindStringSubmatch(string(body))
	if m == nil {
		t.Fatalf("the sign-in page of %s links no site stylesheet:\n%s", origin, webExcerpt(string(body)))
	}
	code, hdr, sheet := ts.get(t, origin, m[1])
	if code != http.StatusOK {
		t.Fatalf("GET %s%s: %d", origin, m[1], code)
	}
	return m[1], string(sheet), hdr
}

// Setting a site's appearance through the admin API changes that site's
// sign-in page and no other site's; colours a person could not read are
// refused with 422 naming the pair and its ratio, by the API and by the
// admin area alike.
func TestBrandingPerSite(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, nil)
		academy, open := ts.academy(), ts.open()
		tok := admOwnerToken(t, ts, academy, "appearance:read", "appearance:write", "storage:write")

		a0, css0, _ := brandOf(t, ts, academy)
		o0, openCSS, _ := brandOf(t, ts, open)
		want := demo.Appearance(demo.AcademySlug)
		if !strings.Contains(css0, "--accent: "+want.PrimaryColor) || strings.Contains(openCSS, want.PrimaryColor) {
			t.Fatalf("the demo sites do not wear their own themes:\nacademy %s\nopen %s", css0, openCSS)
		}

		admDo(t, ts, http.MethodPut, academy, "/appearance", tok, map[string]any{
			"primaryColor": "#7a1f5c", "accentColor": "#e0a000", "backgroundColor": "#fffdf7", "textColor": "#2b2118",
		}).want(t, http.StatusOK, "a readable theme")
		a1, css1, hdr := brandOf(t, ts, academy)
		if a1 == a0 || !strings.Contains(css1, "--accent: #7a1f5c") || !strings.Contains(css1, "--ink: #2b2118") {
			t.Fatalf("after PUT /appearance the academy links %s (was %s):\n%s", a1, a0, css1)
		}
		if cc := hdr.Get("Cache-Control"); cc != "public, max-age=31536000, immutable" || hdr.Get("ETag") == "" ||
			hdr.Get("Content-Type") != "text/css; charset=utf-8" || hdr.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("the versioned stylesheet is served with %v", hdr)
		}
		if code, _, _ := ts.get(t, academy, "/brand.css", "If-None-Match", hdr.Get("ETag")); code != http.StatusNotModified {
			t.Errorf("revalidating the stylesheet with its ETag: %d, want 304", code)
		}
		if o1, css, _ := brandOf(t, ts, open); o1 != o0 || strings.Contains(css, "#7a1f5c") {
			t.Errorf("the open school's page changed with the academy's theme: %s (was %s)", o1, o0)
		}

		// A logo: shown in the header, served from the site's own origin
		// with its content type and nosniff.
		logo := admUpload(t, ts, academy, tok, "logo.png", "image/png", admPNG).want(t, http.StatusCreated, "uploading a logo").obj(t)
		admDo(t, ts, http.MethodPut, academy, "/appearance", tok, map[string]any{
			"primaryColor": "#7a1f5c", "accentColor": "#e0a000", "backgroundColor": "#fffdf7", "textColor": "#2b2118", "logoFileId": logo["id"],
		}).want(t, http.StatusOK, "a theme with a logo")
		_, _, signIn := ts.get(t, academy, "/login")
		m := regexp.MustCompile(`<img class="site-logo" src="(/uploads/[a-z2-7]+)"`).FindStringSubmatch(string(signIn))
		if m == nil {
			t.Fatalf("the sign-in page shows no logo:\n%s", webExcerpt(string(signIn)))
		}
		if code, hdr, body := ts.get(t, academy, m[1]); code != http.StatusOK || hdr.Get("Content-Type") != "image/png" ||
			hdr.Get("X-Content-Type-Options") != "nosniff" || string(body) != string(admPNG) {
			t.Errorf("the logo is served as %d %v", code, hdr)
		}
		if _, _, page := ts.get(t, open, "/login"); strings.Contains(string(page), m[1]) {
			t.Error("the open school shows the academy's logo")
		}
		a1, _, _ = brandOf(t, ts, academy)

		// Light grey on white: text on the background fails.
		p := admProblem(t, admDo(t, ts, http.MethodPut, academy, "/appearance", tok, map[string]any{
			"primaryColor": "#1f6feb", "accentColor": "#f2a900", "backgroundColor": "#ffffff", "textColor": "#bbbbbb",
		}), http.StatusUnprocessableEntity, "textColor", "light grey text")
		c, _ := p["contrast"].(map[string]any)
		if p["type"] != "urn:lectern:problem:contrast" || c["foreground"] != "textColor" || c["background"] != "backgroundColor" ||
			c["ratio"] != 1.91 || c["required"] != 4.5 || !strings.Contains(p["detail"].(string), "1.91:1") {
			t.Errorf("the problem does not name the pair and its ratio: %v", p)
		}
		// Yellow buttons with white labels: the background on the primary
		// colour fails.
		p = admProblem(t, admDo(t, ts, http.MethodPut, academy, "/appearance", tok, map[string]any{
			"primaryColor": "#ffd400", "accentColor": "#000000", "backgroundColor": "#ffffff", "textColor": "#111111",
		}), http.StatusUnprocessableEntity, "primaryColor", "white on yellow")
		if c, _ := p["contrast"].(map[string]any); c["foreground"] != "backgroundColor" || c["background"] != "primaryColor" {
			t.Errorf("white on yellow: %v", p)
		}
		if a2, _, _ := brandOf(t, ts, academy); a2 != a1 {
			t.Errorf("a refused theme changed the stylesheet: %s, was %s", a2, a1)
		}

		// The admin area checks the same colours and says the same.
		owner := webSignIn(t, ts, academy, demo.OwnerEmail, demo.OwnerPassword)
		form := owner.form("/admin/settings", "appearance-form", url.Values{"textColor": {"#cccccc"}})
		if form.Get("primaryColor") != "#7a1f5c" {
			t.Errorf("the appearance form shows primary %q; want the stored #7a1f5c", form.Get("primaryColor"))
		}
		page := owner.expectPost("/admin/settings/appearance", form, http.StatusUnprocessableEntity)
		ratio := brand.FormatRatio(float64(int(brand.Contrast("#cccccc", "#fffdf7")*100)) / 100)
		msg := webTextByID(t, page.Body, "appearance-error")
		if !strings.Contains(msg, "Text colour on Background colour has a contrast of "+ratio+":1") || !strings.Contains(msg, "4.5:1") {
			t.Errorf("the admin area says %q; want the pair and %s:1", msg, ratio)
		}
		if !strings.Contains(page.Body, `id="color-textColor" name="textColor" type="color" value="#cccccc"`) ||
			!strings.Contains(page.Body, `aria-invalid="true"`) {
			t.Errorf("the refused form does not keep and mark the colour:\n%s", webExcerpt(page.Body))
		}
		form.Set("textColor", "#000000")
		owner.expectPost("/admin/settings/appearance", form, http.StatusSeeOther)
		if _, css, _ := brandOf(t, ts, academy); !strings.Contains(css, "--ink: #000000") {
			t.Errorf("the admin area's theme did not reach the pages:\n%s", css)
		}
	})
}

// getLang fetches origin+path with the browser's cookies and header
// pairs.
func getLang(t *testing.T, b *oauthtest.Browser, u string, hdr ...string) *oauthtest.Page {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := b.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return &oauthtest.Page{URL: req.URL, Status: resp.StatusCode, Header: resp.Header, Body: string(body)}
}

var htmlLang = regexp.MustCompile(`<html lang="([a-z]+)">`)

func pageLang(t *testing.T, p *oauthtest.Page) string {
	t.Helper()
	m := htmlLang.FindStringSubmatch(p.Body)
	if m == nil {
		t.Fatalf("no <html lang> on %s:\n%s", p.URL, webExcerpt(p.Body))
	}
	return m[1]
}

// The language of a page: Accept-Language gives a German sign-in page
// with <html lang="de">; the site's default language serves a browser
// that asks for none of ours; the selector switches the language, is
// remembered in a cookie and on the account, and follows the person to a
// new browser at sign-in.
func TestPagesSpeakTheLanguage(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, nil)
		academy, open := ts.academy(), ts.open()
		anon := oauthtest.NewBrowser(ts.addr)

		de := getLang(t, anon, academy+"/login", "Accept-Language", "de-DE,de;q=0.9,en;q=0.5")
		if de.Status != http.StatusOK || pageLang(t, de) != "de" || de.Header.Get("Content-Language") != "de" {
			t.Fatalf("Accept-Language de: %d, lang %q, Content-Language %q", de.Status, pageLang(t, de), de.Header.Get("Content-Language"))
		}
		for _, want := range []string{"<title>Anmelden · " + demo.AcademyName, "E-Mail-Adresse", "Passwort vergessen?", ">Anmelden</button>"} {
			if !strings.Contains(de.Body, want) {
				t.Errorf("the German sign-in page lacks %q", want)
			}
		}
		if strings.Contains(de.Body, "Forgot your password?") {
			t.Error("the German sign-in page still has English text")
		}
		if ja := getLang(t, anon, academy+"/login", "Accept-Language", "ja, zh;q=0.5"); pageLang(t, ja) != "en" {
			t.Errorf("a browser asking for none of ours got %q; want the site's default, en", pageLang(t, ja))
		}

		// The site's default language (the school's locale) serves those.
		tok := admOwnerToken(t, ts, open, "school:read", "school:write")
		admDo(t, ts, http.MethodPatch, open, "/school", tok, map[string]any{"locale": "fr-CA"}).want(t, http.StatusOK, "locale fr-CA")
		eventually(t, 5*time.Second, func() error {
			if l := pageLang(t, getLang(t, anon, open+"/login", "Accept-Language", "ja")); l != "fr" {
				return fmt.Errorf("the open school's page is in %q; want its default, fr", l)
			}
			return nil
		})
		if l := pageLang(t, getLang(t, anon, open+"/login", "Accept-Language", "es")); l != "es" {
			t.Errorf("Accept-Language es at a French site: %q; the browser's language comes before the site's", l)
		}

		// The selector: a link on every page, back to the same page.
		sel := regexp.MustCompile(`href="(/language\?lang=es&amp;return_to=[^"]+)"`).FindStringSubmatch(de.Body)
		if sel == nil {
			t.Fatalf("the sign-in page has no selector link to Español:\n%s", webExcerpt(de.Body))
		}
		choose := getLang(t, anon, academy+strings.ReplaceAll(sel[1], "&amp;", "&"), "Accept-Language", "de")
		if choose.Status != http.StatusSeeOther || choose.Header.Get("Location") != "/login" {
			t.Fatalf("choosing Español: %d to %q; want 303 back to /login", choose.Status, choose.Header.Get("Location"))
		}
		es := getLang(t, anon, academy+"/login", "Accept-Language", "de")
		if pageLang(t, es) != "es" || !strings.Contains(es.Body, "Iniciar sesión") {
			t.Errorf("after choosing Español the page is in %q", pageLang(t, es))
		}
		// Another site keeps its own choice (the cookie is per host).
		if l := pageLang(t, getLang(t, anon, open+"/login", "Accept-Language", "de")); l != "de" {
			t.Errorf("the choice at the academy changed the open school's page to %q", l)
		}
		// Bad input: an unknown language is 400; a return address off the
		// site is never followed.
		if p := getLang(t, anon, academy+"/language?lang=xx&return_to=/login"); p.Status != http.StatusBadRequest {
			t.Errorf("an unknown language: %d, want 400", p.Status)
		}
		for _, back := range []string{"//evil.example/", "https://evil.example/", "/\\evil.example"} {
			p := getLang(t, anon, academy+"/language?lang=fr&return_to="+url.QueryEscape(back))
			if loc := p.Header.Get("Location"); p.Status != http.StatusSeeOther || loc != "/account" {
				t.Errorf("return_to %q: %d to %q; want 303 to /account", back, p.Status, loc)
			}
		}

		// Remembered on the account: chosen before signing in, kept at
		// sign-in, and brought back to a new browser.
		first := webAnonymous(t, ts, academy)
		getLang(t, first.b, academy+"/language?lang=es&return_to=/login")
		signInWith(t, first, demo.StudentEmail, demo.StudentPassword)
		u, err := ts.app.Store.UserByEmail(context.Background(), demo.StudentEmail)
		if err != nil || u.Language != "es" {
			t.Fatalf("after signing in with Español chosen the account's language is %q (%v)", u.Language, err)
		}
		second := webAnonymous(t, ts, academy)
		signInWith(t, second, demo.StudentEmail, demo.StudentPassword, "Accept-Language", "de")
		if p := getLang(t, second.b, academy+"/account/connections", "Accept-Language", "de"); pageLang(t, p) != "es" || !strings.Contains(p.Body, "Aplicaciones conectadas") {
			t.Errorf("a new browser after sign-in shows %q; want the account's Español", pageLang(t, p))
		}
		// Switching while signed in changes the account.
		getLang(t, second.b, academy+"/language?lang=fr&return_to=/account", "Sec-Fetch-Site", "same-origin")
		if u, _ := ts.app.Store.UserByEmail(context.Background(), demo.StudentEmail); u.Language != "fr" {
			t.Errorf("switching while signed in left the account at %q; want fr", u.Language)
		}
		// A link from another site changes the cookie, never the account.
		getLang(t, second.b, academy+"/language?lang=de&return_to=/account", "Sec-Fetch-Site", "cross-site")
		if u, _ := ts.app.Store.UserByEmail(context.Background(), demo.StudentEmail); u.Language != "fr" {
			t.Errorf("a cross-site link changed the account's language to %q", u.Language)
		}
	})
}

// signInWith signs p in through the sign-in form, with header pairs on
// every request.
func signInWith(t *testing.T, p *webPerson, email, password string, hdr ...string) {
	t.Helper()
	page := getLang(t, p.b, p.origin+"/login", hdr...)
	f, err := oauthtest.ParseForm(page.Body, "login-form")
	if err != nil {
		t.Fatal(err)
	}
	f.Values.Set("email", email)
	f.Values.Set("password", password)
	if res := p.post("/login", f.Values); res.Status != http.StatusSeeOther {
		t.Fatalf("sign-in of %s: status %d\n%s", email, res.Status, webExcerpt(res.Body))
	}
}
