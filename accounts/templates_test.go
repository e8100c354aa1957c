package accounts

import (
	"testing"

	"github.com/lectern/lectern/i18n"
	"github.com/lectern/lectern/storage"
)

// Every template of the account pages goes through the catalogs.
func TestTemplatesAreTranslated(t *testing.T) {
	problems, n, err := i18n.CheckFiles(templateFS, "templates/*.html")
	if err != nil {
		t.Fatal(err)
	}
	if n < 6 {
		t.Fatalf("checked %d templates; want the six account pages", n)
	}
	for _, p := range problems {
		t.Error(p)
	}
	for _, r := range []string{storage.RoleOwner, storage.RoleAdmin, storage.RoleLecturer, storage.RoleStudent} {
		if k := "accounts.invitation.as_" + r; !i18n.Has(i18n.Default, k) {
			t.Errorf("no message %q for an invitation as %s", k, r)
		}
	}
}
