package adminapi

import (
	"fmt"
	"net/url"
	"reflect"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/lectern/lectern/storage"
)

// idOf is the ID of a storage record (every kind the Records accessors
// serve has an int64 ID).
func idOf[T any](rec *T) int64 { return reflect.ValueOf(rec).Elem().FieldByName("ID").Int() }

// kind names a record kind in audit actions ("course.created") and targets
// ("course:12"), and in messages.
type kind string

func (k kind) target(id int64) string { return fmt.Sprintf("%s:%d", k, id) }

func (k kind) noun() string { return strings.ReplaceAll(string(k), "_", " ") }

// fields collects invalid fields; err returns them as one 422.
type fields []InvalidField

func (f *fields) add(field, format string, args ...any) {
	*f = append(*f, InvalidField{Field: field, Message: fmt.Sprintf(format, args...)})
}

func (f fields) err() error {
	if len(f) == 0 {
		return nil
	}
	return errInvalid(f...)
}

var (
	slugRE     = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	currencyRE = regexp.MustCompile(`^[A-Z]{3}$`)
	colorRE    = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)
	localeRE   = regexp.MustCompile(`^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$`)
	codeRE     = regexp.MustCompile(`^[A-Za-z0-9_-]{3,64}$`)
)

// text checks a free-text field: length in characters, and no control
// characters (line breaks and tabs only where multiline).
func (f *fields) text(field, v string, minLen, maxLen int, multiline bool) {
	n := utf8.RuneCountInString(v)
	switch {
	case !utf8.ValidString(v):
		f.add(field, "must be valid UTF-8")
	case minLen > 0 && strings.TrimSpace(v) == "":
		f.add(field, "is required")
	case n > maxLen:
		f.add(field, "must have at most %d characters", maxLen)
	case strings.IndexFunc(v, func(r rune) bool {
		return unicode.IsControl(r) && !(multiline && (r == '\n' || r == '\r' || r == '\t'))
	}) >= 0:
		f.add(field, "must not contain control characters")
	}
}

func (f *fields) slug(field, v string) {
	if len(v) > 120 || !slugRE.MatchString(v) {
		f.add(field, "must be lower-case letters, digits and single hyphens (at most 120)")
	}
}

func (f *fields) currency(field, v string) {
	if !currencyRE.MatchString(v) {
		f.add(field, "must be a three-letter ISO 4217 code such as USD")
	}
}

func (f *fields) status(field, v string) {
	if v != storage.StatusDraft && v != storage.StatusPublished {
		f.add(field, "must be draft or published")
	}
}

// offer checks what every item the site sells by itself (a plan, a
// product) has: slug, title, description, price and currency.
func (f *fields) offer(slug, title, description string, priceCents int64, currency string) {
	f.slug("slug", slug)
	f.text("title", title, 1, 300, false)
	f.text("description", description, 0, 20000, true)
	f.nonNegative("priceCents", priceCents)
	f.currency("currency", currency)
}

func (f *fields) nonNegative(field string, v int64) {
	if v < 0 {
		f.add(field, "must not be negative")
	}
}

// webURL checks an optional absolute http(s) URL.
func (f *fields) webURL(field, v string, maxLen int) {
	if v == "" {
		return
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || len(v) > maxLen {
		f.add(field, "must be an absolute http or https URL of at most %d characters", maxLen)
	}
}

func (f *fields) email(field, v string) {
	if len(v) > 320 || !strings.Contains(v, "@") || strings.ContainsAny(v, " \t\r\n") {
		f.add(field, "must be an e-mail address")
	}
}

// set copies *src into *dst when src is given: PATCH semantics.
func set[T any](dst *T, src *T) {
	if src != nil {
		*dst = *src
	}
}

// setAs is set for a field the API types as a named string (an enum).
func setAs[S ~string](dst *string, src *S) {
	if src != nil {
		*dst = string(*src)
	}
}

// ptr returns a pointer to a copy of v.
func ptr[T any](v T) *T { return &v }

// orDefault is *p, or def when p is nil.
func orDefault[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}
