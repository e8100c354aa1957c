package mail

import (
	"strings"
	"testing"

	"github.com/lectern/lectern/i18n"
)

// Every mail template goes through the catalogs, text and HTML parts
// alike.
func TestTemplatesAreTranslated(t *testing.T) {
	for _, pattern := range []string{"templates/*.txt", "templates/*.html"} {
		problems, n, err := i18n.CheckFiles(TemplateFS(), pattern)
		if err != nil {
			t.Fatal(err)
		}
		if n < 6 {
			t.Fatalf("%s: checked %d templates", pattern, n)
		}
		for _, p := range problems {
			t.Error(p)
		}
	}
}

// A message in German reads German in its subject, text and HTML, with
// <html lang="de">, and wears the site's colours; the values put into it
// are escaped in the HTML.
func TestRenderInLanguageAndColours(t *testing.T) {
	tpl, err := NewTemplates()
	if err != nil {
		t.Fatal(err)
	}
	d := Data{SiteName: "Akademie <b>", SiteOrigin: "https://a.test", To: "ada@example.test", Link: "https://a.test/invitations/accept?token=x",
		Role: "lecturer", InvitedBy: "Olivia", ValidDays: 7, Lang: "de", PrimaryColor: "#3730a3", BackgroundColor: "#ffffff", TextColor: "#1e1b4b", AccentColor: "#f59e0b"}
	subject, text, html, err := tpl.Render(KindInvitation, d)
	if err != nil {
		t.Fatal(err)
	}
	if subject != "Einladung zu Akademie <b>" {
		t.Errorf("subject %q", subject)
	}
	if !strings.Contains(text, "Olivia hat Sie eingeladen, Akademie <b> als Dozent beizutreten.") || !strings.Contains(text, "in 7 Tagen") {
		t.Errorf("text part not German:\n%s", text)
	}
	for _, want := range []string{`<html lang="de">`, "Einladung annehmen", "background:#3730a3", "Akademie &lt;b&gt;"} {
		if !strings.Contains(html, want) {
			t.Errorf("HTML lacks %q:\n%s", want, html)
		}
	}
	if strings.Contains(html, "Akademie <b>") {
		t.Error("the site name reached the HTML unescaped")
	}
	// Without a language or colours: English and the default theme.
	d.Lang, d.PrimaryColor = "", "red; background:url(x)"
	_, text, html, err = tpl.Render(KindInvitation, d)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "Olivia invited you to join") || !strings.Contains(html, "background:#1f6feb") {
		t.Errorf("defaults: text %q", text)
	}
}
