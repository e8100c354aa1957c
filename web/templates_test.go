package web

import (
	"testing"

	"github.com/lectern/lectern/i18n"
	"github.com/lectern/lectern/limits"
	"github.com/lectern/lectern/storage"
)

// Every template of the admin area and the account pages goes through the
// catalogs: no text a person reads is written into a template, and every
// key it names exists.
func TestTemplatesAreTranslated(t *testing.T) {
	problems, n, err := i18n.CheckFiles(templateFiles, "templates/*.html")
	if err != nil {
		t.Fatal(err)
	}
	if n < 13 {
		t.Fatalf("checked %d templates; want every page of the package", n)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// The keys pages build from values (roles, limits, client types, the
// appearance form's fields) exist too.
func TestComposedKeysExist(t *testing.T) {
	var keys []string
	for _, r := range []string{"owner", "admin", "lecturer", "student", "none"} {
		keys = append(keys, "role."+r)
	}
	for _, l := range limits.All {
		keys = append(keys, "limit."+string(l.Name)+".title", "limit."+string(l.Name)+".unit")
	}
	for _, c := range []string{"public", "confidential"} {
		keys = append(keys, "web.app.type_"+c)
	}
	for _, f := range colorFields(storage.DefaultAppearance(1)) {
		keys = append(keys, f.Label, f.Hint)
	}
	keys = append(keys, "time.never", "time.not_yet", "time.expired")
	for _, k := range keys {
		if !i18n.Has(i18n.Default, k) {
			t.Errorf("no message %q", k)
		}
	}
}
