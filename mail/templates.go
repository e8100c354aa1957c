package mail

import (
	"bytes"
	"embed"
	"fmt"
	"html"
	htmltemplate "html/template"
	"io/fs"
	"regexp"
	"strings"
	texttemplate "text/template"
	"time"

	"github.com/lectern/lectern/i18n"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

//go:embed templates/*.txt templates/*.html
var templateFS embed.FS

// The kinds of message, one template pair each (templates/<kind>.txt with
// the subject and the plain text, templates/<kind>.html with the HTML).
const (
	KindInvitation        = "invitation"
	KindSignUpVerify      = "signup_verify"
	KindSignUpExists      = "signup_exists"
	KindPasswordReset     = "password_reset"
	KindEmailChangeVerify = "email_change_verify"
	KindEmailChangeNotice = "email_change_notice"
	// KindFactorNotice tells the account that one of its second factors
	// was added or removed (Data.Factor says which change).
	KindFactorNotice = "factor_notice"
)

var kinds = []string{KindInvitation, KindSignUpVerify, KindSignUpExists, KindPasswordReset, KindEmailChangeVerify, KindEmailChangeNotice, KindFactorNotice}

// The changes a factor notice (KindFactorNotice) tells of.
const (
	FactorPasskeyAdded   = "passkey_added"
	FactorPasskeyRemoved = "passkey_removed"
	FactorAppAdded       = "totp_added"
	FactorAppReplaced    = "totp_replaced"
	FactorAppRemoved     = "totp_removed"
	// The provider's support removed factors (lectern user
	// remove-factors): the passkeys at the site (FactorName lists their
	// names), or the authenticator app.
	FactorPasskeysRemovedBySupport = "passkeys_removed_support"
	FactorAppRemovedBySupport      = "totp_removed_support"
)

// Data is what a template may show. Each kind uses some of it.
type Data struct {
	SiteName   string
	SiteOrigin string
	// To is the recipient's address; Name their name, when known.
	To   string
	Name string
	// Link is the message's single-use link.
	Link string
	// SignInLink and ResetLink are the site's sign-in and password-reset
	// pages.
	SignInLink string
	ResetLink  string
	// Role and InvitedBy describe an invitation.
	Role      string
	InvitedBy string
	// NewEmail is the address an e-mail change moves to.
	NewEmail string
	// Factor is the change a factor notice tells of (FactorPasskeyAdded,
	// ...), FactorName the passkey's name, At when it was made.
	Factor     string
	FactorName string
	At         time.Time
	// How long the link is valid, in the unit the template names.
	ValidDays, ValidHours, ValidMinutes int

	// Lang is the message's language (package i18n); empty: English.
	Lang string
	// The site's colours (its appearance), as #rrggbb; empty: the default
	// theme. Buttons are the primary colour with a label in the background
	// colour, the pair the appearance's contrast check holds to 4.5:1.
	PrimaryColor, AccentColor, BackgroundColor, TextColor string

	// Subject is filled in for the HTML part (its <title>).
	Subject string
	// When is At in the message's language (Render fills it in).
	When string
}

// defaultColors are the colours of a site without an appearance
// (storage.DefaultAppearance).
var defaultColors = [4]string{"#1f6feb", "#f2a900", "#ffffff", "#1b1f24"}

// TemplateFS is the embedded templates, for the test that checks every
// template goes through the catalogs.
func TemplateFS() fs.FS { return templateFS }

// placeholderFuncs let the templates parse; Render binds the language.
var placeholderFuncs = map[string]any{
	"t": func(string, ...any) string { return "" },
}

// textFuncs and htmlFuncs translate into lang. In HTML, messages are
// trusted markup (our catalogs) and the values put into them are escaped.
func textFuncs(lang string) texttemplate.FuncMap {
	return texttemplate.FuncMap{"t": func(id string, args ...any) string { return i18n.T(lang, id, args...) }}
}

func htmlFuncs(lang string) htmltemplate.FuncMap {
	return htmltemplate.FuncMap{"t": func(id string, args ...any) htmltemplate.HTML {
		esc := make([]any, len(args))
		for i, a := range args {
			if i%2 == 1 {
				if h, ok := a.(htmltemplate.HTML); ok {
					esc[i] = string(h)
				} else {
					esc[i] = html.EscapeString(fmt.Sprint(a))
				}
			} else {
				esc[i] = a
			}
		}
		return htmltemplate.HTML(i18n.T(lang, id, esc...))
	}}
}

var colorRE = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)

// From is the sender of a site's mail.
type From struct {
	Name    string
	Address string
}

// Templates renders the embedded message templates.
type Templates struct {
	text map[string]*texttemplate.Template
	html map[string]*htmltemplate.Template
}

// NewTemplates parses every template; a missing or broken one is an error
// (a defect of the build).
func NewTemplates() (*Templates, error) {
	t := &Templates{text: map[string]*texttemplate.Template{}, html: map[string]*htmltemplate.Template{}}
	for _, k := range kinds {
		tt, err := texttemplate.New(k).Option("missingkey=error").Funcs(placeholderFuncs).ParseFS(templateFS, "templates/"+k+".txt")
		if err != nil {
			return nil, fmt.Errorf("mail: template %s.txt: %w", k, err)
		}
		if tt.Lookup("subject") == nil || tt.Lookup("body") == nil {
			return nil, fmt.Errorf("mail: template %s.txt must define subject and body", k)
		}
		ht, err := htmltemplate.New(k).Option("missingkey=error").Funcs(placeholderFuncs).ParseFS(templateFS, "templates/layout.html", "templates/"+k+".html")
		if err != nil {
			return nil, fmt.Errorf("mail: template %s.html: %w", k, err)
		}
		t.text[k], t.html[k] = tt, ht
	}
	return t, nil
}

// Render returns the subject, plain text and HTML of a message of kind,
// in d.Lang and the site's colours. The parsed templates are never
// executed themselves: each message runs clones bound to its language
// (html/template cannot clone a template once executed).
func (t *Templates) Render(kind string, d Data) (subject, text, html string, err error) {
	pt, ok := t.text[kind]
	if !ok {
		return "", "", "", fmt.Errorf("mail: no template %q", kind)
	}
	if !i18n.Supported(d.Lang) {
		d.Lang = i18n.Default
	}
	if !d.At.IsZero() {
		d.When = i18n.DateTime(d.Lang, d.At.UTC())
	}
	for i, c := range []*string{&d.PrimaryColor, &d.AccentColor, &d.BackgroundColor, &d.TextColor} {
		if !colorRE.MatchString(*c) {
			*c = defaultColors[i]
		}
	}
	tt, err := pt.Clone()
	if err != nil {
		return "", "", "", err
	}
	tt.Funcs(textFuncs(d.Lang))
	ht, err := t.html[kind].Clone()
	if err != nil {
		return "", "", "", err
	}
	ht.Funcs(htmlFuncs(d.Lang))
	var b bytes.Buffer
	if err := tt.ExecuteTemplate(&b, "subject", d); err != nil {
		return "", "", "", err
	}
	// A subject is one line, whatever the data held.
	subject = strings.Join(strings.Fields(b.String()), " ")
	b.Reset()
	if err := tt.ExecuteTemplate(&b, "body", d); err != nil {
		return "", "", "", err
	}
	text = strings.TrimSpace(b.String()) + "\n"
	b.Reset()
	d.Subject = subject
	if err := ht.ExecuteTemplate(&b, "layout", d); err != nil {
		return "", "", "", err
	}
	return subject, text, b.String(), nil
}

// Compose renders a message of kind from from to d.To as an outbox row.
func (t *Templates) Compose(kind string, site tenant.ID, from From, d Data) (*storage.OutboxMessage, error) {
	subject, text, html, err := t.Render(kind, d)
	if err != nil {
		return nil, err
	}
	m := &storage.OutboxMessage{
		Purpose: kind, ToAddr: d.To, FromName: from.Name, FromAddr: from.Address,
		Subject: subject, TextBody: text, HTMLBody: html, SiteID: site,
	}
	return m, nil
}
