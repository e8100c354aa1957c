package ui

import (
	"testing"

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
