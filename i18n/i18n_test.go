package i18n

import (
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Every catalog has exactly the keys of the English one, and each message
// uses the same placeholders: a missing or misspelt key fails here, not
// on a page.
func TestCatalogsHaveEveryKey(t *testing.T) {
	en := Keys(Default)
	if len(en) < 50 {
		t.Fatalf("the English catalog has %d keys; it did not load", len(en))
	}
	ph := regexp.MustCompile(`\{\{\s*\.(\w+)\s*\}\}`)
	for _, lang := range Languages[1:] {
		got := Keys(lang)
		for _, k := range en {
			if !slices.Contains(got, k) {
				t.Errorf("%s: missing key %q", lang, k)
				continue
			}
			want := placeholders(ph, rawMessage(Default, k))
			if have := placeholders(ph, rawMessage(lang, k)); !slices.Equal(want, have) {
				t.Errorf("%s: %q uses placeholders %v; English uses %v", lang, k, have, want)
			}
		}
		for _, k := range got {
			if !slices.Contains(en, k) {
				t.Errorf("%s: key %q is not in the English catalog", lang, k)
			}
		}
	}
}

func rawMessage(lang, id string) string {
	// The placeholders survive as text when rendered without data.
	return T(lang, id, "Count", "{{.Count}}")
}

func placeholders(re *regexp.Regexp, s string) []string {
	var out []string
	for _, m := range re.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func TestTranslates(t *testing.T) {
	for lang, want := range map[string]string{"en": "Sign in", "de": "Anmelden", "fr": "Se connecter", "es": "Iniciar sesión"} {
		if got := T(lang, "login.title"); got != want {
			t.Errorf("T(%s, login.title) = %q; want %q", lang, got, want)
		}
	}
	if got := T("de", "consent.title", "Client", "Quiz App"); got != "Quiz App erlauben?" {
		t.Errorf("placeholder: %q", got)
	}
	if got := T("xx", "login.title"); got != "Sign in" {
		t.Errorf("unknown language: %q; want English", got)
	}
	if got := T("de", "no.such.key"); got != "no.such.key" {
		t.Errorf("unknown key: %q; want the key back", got)
	}
	if got := Text("fr", "error.title"); got != "Une erreur s’est produite" {
		t.Errorf("Text of a key: %q", got)
	}
	if got := Text("de", "Ada Lovelace"); got != "Ada Lovelace" {
		t.Errorf("Text of a name changed it: %q", got)
	}
	if got := TN("de", "time.minutes_ago", 1); got != "vor 1 Minute" {
		t.Errorf("TN one: %q", got)
	}
	if got := TN("fr", "time.days_ago", 3); got != "il y a 3 jours" {
		t.Errorf("TN other: %q", got)
	}
}

// The language of a page: the cookie, else Accept-Language, else the
// site's default, else English.
func TestResolveOrder(t *testing.T) {
	for _, c := range []struct {
		name, cookie, accept, site, want string
	}{
		{"nothing", "", "", "", "en"},
		{"site default", "", "", "fr", "fr"},
		{"site default with region", "", "", "es-MX", "es"},
		{"unsupported site default", "", "", "ja", "en"},
		{"browser beats site", "", "de-DE,de;q=0.9,en;q=0.5", "fr", "de"},
		{"browser quality order", "", "fr;q=0.4, es;q=0.8", "", "es"},
		{"browser asks for none of ours", "", "ja, zh;q=0.8", "fr", "fr"},
		{"cookie beats browser", "es", "de", "fr", "es"},
		{"unsupported cookie ignored", "xx", "de", "fr", "de"},
	} {
		r := httptest.NewRequest("GET", "/login", nil)
		if c.cookie != "" {
			r.Header.Set("Cookie", CookieName+"="+c.cookie)
		}
		if c.accept != "" {
			r.Header.Set("Accept-Language", c.accept)
		}
		if got := Resolve(r, c.site); got != c.want {
			t.Errorf("%s: Resolve = %q; want %q", c.name, got, c.want)
		}
	}
}

func TestFormats(t *testing.T) {
	at := time.Date(2026, time.March, 3, 14, 5, 0, 0, time.UTC)
	for lang, want := range map[string]string{
		"en": "3 Mar 2026, 14:05 UTC", "de": "3. März 2026, 14:05 UTC", "fr": "3 mars 2026 à 14:05 UTC", "es": "3 mar 2026, 14:05 UTC",
	} {
		if got := DateTime(lang, at); got != want {
			t.Errorf("DateTime(%s) = %q; want %q", lang, got, want)
		}
	}
	for lang, want := range map[string]string{
		"en": "USD 1,234.50", "de": "1.234,50\u00a0USD", "fr": "1\u00a0234,50\u00a0USD", "es": "1.234,50\u00a0USD",
	} {
		if got := Price(lang, 123450, "usd"); got != want {
			t.Errorf("Price(%s) = %q; want %q", lang, got, want)
		}
	}
	if got := Price("de", 4900, "JPY"); got != "4.900\u00a0JPY" {
		t.Errorf("a currency without minor units: %q", got)
	}
	now := at.Add(5 * time.Minute)
	if got := Ago("es", now, at); got != "hace 5 minutos" {
		t.Errorf("Ago: %q", got)
	}
	if got := Ago("de", at.Add(30*24*time.Hour), at); got != "3. März 2026" {
		t.Errorf("Ago a month later: %q", got)
	}
}

// The template check finds text a person reads, and only that.
func TestCheckTemplate(t *testing.T) {
	src := `{{define "content"}}<p class="lead">{{t "a.b" "X" .Y}}</p>
<p>Hello {{.Name}}</p>
<img src="{{.URL}}" alt="Your picture"><a aria-label="{{t "c.d"}}" href="/x">{{.Label}}</a>
<input value="yes" autocomplete="username">&middot; {{if .Z}}{{tn "e.f" .N}}{{else}}Nothing{{end}}{{end}}`
	rep, err := CheckTemplate("x.html", src, true)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(rep.Keys)
	if !slices.Equal(rep.Keys, []string{"a.b", "c.d", "e.f"}) {
		t.Errorf("keys %v", rep.Keys)
	}
	got := strings.Join(rep.Literal, "|")
	for _, want := range []string{"Hello", "alt=Your picture", "Nothing"} {
		if !strings.Contains(got, want) {
			t.Errorf("literal text %q not reported (got %q)", want, got)
		}
	}
	if len(rep.Literal) != 3 {
		t.Errorf("reported %q; want exactly the three literals", rep.Literal)
	}
	txt, err := CheckTemplate("x.txt", "{{t \"mail.hi\"}}\n\n{{.URL}}\n", false)
	if err != nil || len(txt.Literal) != 0 {
		t.Errorf("text template: %v %v", txt.Literal, err)
	}
	txt, _ = CheckTemplate("x.txt", "Hi {{.Name}}\n", false)
	if len(txt.Literal) != 1 {
		t.Errorf("text template literal not reported: %v", txt.Literal)
	}
}

// Catalogs are parsed on first use: every one of them parses, and the
// first uses of all languages at once each get their own language.
func TestCatalogsLoadOnFirstUse(t *testing.T) {
	for _, lang := range Languages {
		if err := catalogs[lang].load().err; err != nil {
			t.Errorf("%s: %v", lang, err)
		}
	}
	want := map[string]string{"en": "Sign in", "de": "Anmelden", "fr": "Se connecter", "es": "Iniciar sesión"}
	fresh := map[string]*langCatalog{}
	for _, lang := range Languages {
		fresh[lang] = &langCatalog{lang: lang}
	}
	saved := catalogs
	catalogs = fresh
	t.Cleanup(func() { catalogs = saved })
	catalogs[Default].load()
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for i := 0; i < 64; i++ {
		lang := Languages[i%len(Languages)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			if got := T(lang, "login.title"); got != want[lang] {
				errs <- lang + ": " + got
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("first use in parallel: %s", e)
	}
}

// A moment ahead is counted to the nearest unit: a 7-day link read a
// moment after it was sent expires "in 7 days" (truncating said 6), and
// the unit follows the rounded count (never "in 60 minutes").
func TestIn(t *testing.T) {
	now := time.Date(2026, time.March, 3, 14, 5, 0, 0, time.UTC)
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{7*24*time.Hour - 2*time.Second, "in 7 days"},
		{7 * 24 * time.Hour, "in 7 days"},
		{6*24*time.Hour + 13*time.Hour, "in 7 days"},
		{6*24*time.Hour + 11*time.Hour, "in 6 days"},
		{48*time.Hour - time.Second, "in 2 days"},
		{47*time.Hour + 20*time.Minute, "in 47 hours"},
		{24 * time.Hour, "in 24 hours"},
		{60*time.Minute - 10*time.Second, "in 1 hour"},
		{89 * time.Minute, "in 1 hour"},
		{30*time.Minute - time.Second, "in 30 minutes"},
		{10 * time.Second, "in 1 minute"},
	} {
		if got := In("en", now, now.Add(c.d)); got != c.want {
			t.Errorf("In(%s) = %q, want %q", c.d, got, c.want)
		}
	}
	if got := In("de", now, now.Add(7*24*time.Hour-time.Second)); got != "in 7 Tagen" {
		t.Errorf("In(de) = %q", got)
	}
}
