package mail

import (
	"bytes"
	"embed"
	"fmt"
	htmltemplate "html/template"
	"strings"
	texttemplate "text/template"

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
)

var kinds = []string{KindInvitation, KindSignUpVerify, KindSignUpExists, KindPasswordReset, KindEmailChangeVerify, KindEmailChangeNotice}

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
	// How long the link is valid, in the unit the template names.
	ValidDays, ValidHours, ValidMinutes int

	// Subject is filled in for the HTML part (its <title>).
	Subject string
}

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
		tt, err := texttemplate.New(k).Option("missingkey=error").ParseFS(templateFS, "templates/"+k+".txt")
		if err != nil {
			return nil, fmt.Errorf("mail: template %s.txt: %w", k, err)
		}
		if tt.Lookup("subject") == nil || tt.Lookup("body") == nil {
			return nil, fmt.Errorf("mail: template %s.txt must define subject and body", k)
		}
		ht, err := htmltemplate.New(k).Option("missingkey=error").ParseFS(templateFS, "templates/layout.html", "templates/"+k+".html")
		if err != nil {
			return nil, fmt.Errorf("mail: template %s.html: %w", k, err)
		}
		t.text[k], t.html[k] = tt, ht
	}
	return t, nil
}

// Render returns the subject, plain text and HTML of a message of kind.
func (t *Templates) Render(kind string, d Data) (subject, text, html string, err error) {
	tt, ok := t.text[kind]
	if !ok {
		return "", "", "", fmt.Errorf("mail: no template %q", kind)
	}
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
	if err := t.html[kind].ExecuteTemplate(&b, "layout", d); err != nil {
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
