package i18n

import (
	"embed"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"
	goi18n "github.com/nicksnyder/go-i18n/v2/i18n"
	"golang.org/x/text/language"
)

//go:embed locales/*.toml
var localeFS embed.FS

// Default is the language of last resort, and the one catalogs are written
// in first.
const Default = "en"

// CookieName is the cookie that keeps a person's choice of language. It is
// per host (no Domain), so each site remembers its own.
const CookieName = "lectern_lang"

// Languages are the supported languages, in the order the selector lists
// them.
var Languages = []string{"en", "de", "fr", "es"}

// names are the languages in their own words, for the selector.
var names = map[string]string{"en": "English", "de": "Deutsch", "fr": "Français", "es": "Español"}

var matcher language.Matcher

// catalogs holds one catalog per supported language (fixed at init, so the
// map is only read). A catalog is parsed the first time its language is
// used, not at start: a replica keeps only the languages its visitors
// read (the four parsed catalogs were 2 MB of a 10 MB live heap, five
// times that in RSS with GOGC=400). English, the fallback of every
// message, is parsed at init.
var catalogs = map[string]*langCatalog{}

// langCatalog is one language's messages, in a bundle of its own.
type langCatalog struct {
	lang      string
	once      sync.Once
	localizer *goi18n.Localizer
	ids       map[string]bool // message IDs
	err       error
}

func init() {
	tags := make([]language.Tag, 0, len(Languages))
	for _, lang := range Languages {
		catalogs[lang] = &langCatalog{lang: lang}
		tags = append(tags, language.MustParse(lang))
	}
	matcher = language.NewMatcher(tags)
	if c := catalogs[Default].load(); c.err != nil {
		// The catalogs are embedded and every test run loads them: a broken
		// catalog is a defect of the build.
		panic(fmt.Sprintf("i18n: %v", c.err))
	}
}

// load parses the catalog once; later calls return it as it is.
func (c *langCatalog) load() *langCatalog {
	c.once.Do(func() {
		tag := language.MustParse(c.lang)
		bundle := goi18n.NewBundle(tag)
		bundle.RegisterUnmarshalFunc("toml", toml.Unmarshal)
		name := "locales/" + c.lang + ".toml"
		buf, err := fs.ReadFile(localeFS, name)
		if err != nil {
			c.err = err
			return
		}
		mf, err := bundle.ParseMessageFileBytes(buf, path.Base(name))
		if err != nil {
			c.err = fmt.Errorf("%s: %w", name, err)
			return
		}
		c.ids = make(map[string]bool, len(mf.Messages))
		for _, m := range mf.Messages {
			c.ids[m.ID] = true
		}
		c.localizer = goi18n.NewLocalizer(bundle, c.lang)
	})
	return c
}

// catalogOf returns lang's parsed catalog, or English's for a language
// that is not supported or whose catalog does not parse.
func catalogOf(lang string) *langCatalog {
	if c, ok := catalogs[lang]; ok && c.load().err == nil {
		return c
	}
	return catalogs[Default]
}

// localize renders cfg in lang, falling back to English for a message
// lang's catalog lacks, and to the message ID for one no catalog has.
func localize(lang string, cfg *goi18n.LocalizeConfig) string {
	c := catalogOf(lang)
	if !c.ids[cfg.MessageID] && c.lang != Default {
		c = catalogs[Default]
	}
	s, err := c.localizer.Localize(cfg)
	if err != nil && s == "" {
		return cfg.MessageID
	}
	return s
}

// Supported reports whether lang is one of Languages (exactly).
func Supported(lang string) bool { return slices.Contains(Languages, lang) }

// Name is lang in its own words ("Deutsch").
func Name(lang string) string { return names[lang] }

// Keys returns the message IDs of lang's catalog, sorted.
func Keys(lang string) []string {
	c, ok := catalogs[lang]
	if !ok {
		return nil
	}
	ids := c.load().ids // nil for a catalog that does not parse
	out := make([]string, 0, len(ids))
	for k := range ids {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Has reports whether lang's catalog has the message id.
func Has(lang, id string) bool {
	c, ok := catalogs[lang]
	return ok && c.load().ids[id]
}

// T returns message id in lang, with args as pairs of names and values
// for the message's placeholders ({{.Name}}). A message missing in lang
// falls back to English; one missing everywhere comes back as its ID (the
// catalog tests make sure none is).
func T(lang, id string, args ...any) string {
	var data map[string]any
	if len(args) > 0 {
		data = make(map[string]any, len(args)/2)
		for i := 0; i+1 < len(args); i += 2 {
			data[fmt.Sprint(args[i])] = args[i+1]
		}
	}
	return localize(lang, &goi18n.LocalizeConfig{MessageID: id, TemplateData: data})
}

// Match returns the supported language an Accept-Language header asks
// for, or "" when it asks for none of them.
func Match(acceptLanguage string) string {
	if acceptLanguage == "" {
		return ""
	}
	tags, _, err := language.ParseAcceptLanguage(acceptLanguage)
	if err != nil || len(tags) == 0 {
		return ""
	}
	_, idx, conf := matcher.Match(tags...)
	if conf == language.No {
		return ""
	}
	return Languages[idx]
}

// Normalize maps a language code ("de", "de-CH", "FR") to a supported
// language, or "" if it names none.
func Normalize(code string) string {
	code = strings.TrimSpace(code)
	if code == "" {
		return ""
	}
	t, err := language.Parse(code)
	if err != nil {
		return ""
	}
	base, _ := t.Base()
	if Supported(base.String()) {
		return base.String()
	}
	return ""
}

// Resolve picks the language of a page: the person's choice (the cookie),
// else what the browser asks for (Accept-Language), else the site's
// default language, else English.
func Resolve(r *http.Request, siteDefault string) string {
	if c, err := r.Cookie(CookieName); err == nil {
		if l := Normalize(c.Value); l != "" {
			return l
		}
	}
	if l := Match(r.Header.Get("Accept-Language")); l != "" {
		return l
	}
	if l := Normalize(siteDefault); l != "" {
		return l
	}
	return Default
}

// Remember sets the cookie that keeps lang for this site for a year.
func Remember(w http.ResponseWriter, r *http.Request, lang string) {
	http.SetCookie(w, &http.Cookie{
		Name: CookieName, Value: lang, Path: "/", MaxAge: 365 * 24 * 3600,
		HttpOnly: true, Secure: r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https"),
		SameSite: http.SameSiteLaxMode,
	})
}

// Text translates s, which is either a message ID or an English sentence
// of the [text] table (gettext style: handlers pass sentences to pages as
// they are, and the catalogs translate them). Anything else comes back
// unchanged: names, addresses, text a person typed.
func Text(lang, s string) string {
	if s == "" {
		return s
	}
	if id := "text." + s; catalogs[Default].ids[id] {
		return T(lang, id)
	}
	if catalogs[Default].ids[s] {
		return T(lang, s)
	}
	return s
}
