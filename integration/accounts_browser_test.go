package integration

import (
	"net/http"
	"strings"
	"testing"

	"github.com/lectern/lectern/internal/demo"
)

// The invitation as people live it, in headless Chromium: the owner
// invites a lecturer on the admin area's Members page, the lecturer opens
// the mailed link in their own browser, chooses a name and password and
// lands in the admin area, signed in; the owner sees the invitation gone
// from the pending list.
func TestAccountsInvitationBrowser(t *testing.T) {
	requireChromium(t)
	ts, mp := accountServer(t, backend{name: "embedded"}, nil)
	shots := webScreenshotDir(t)
	browser := startChromium(t)
	academy := ts.academy()
	invitee := uniqueEmail("lecturer")

	owner := webNewTab(t, browser, shots)
	owner.navigate(academy + "/admin/members")
	owner.signIn(demo.OwnerEmail, demo.OwnerPassword)
	owner.waitVisible("#invite-form")
	owner.typeInto("#invite-email", invitee)
	owner.eval(`document.querySelector("#invite-role").value = "lecturer"`)
	owner.submit("#invite", http.StatusOK)
	if got := owner.text(".flash"); !strings.Contains(got, "Invitation sent to "+invitee) {
		t.Fatalf("after inviting: %q", got)
	}
	if !owner.exists(`#invitations-table tr[data-email="` + invitee + `"]`) {
		t.Fatal("the invitation is not in the pending list")
	}
	owner.screenshot("admin-members", false)
	owner.screenshot("admin-members", true)

	link := linkIn(t, mailTo(t, mp, invitee, 1), "/invitations/accept")
	lecturer := webNewTab(t, browser, shots)
	if resp := lecturer.navigate(link); resp.Status != http.StatusOK {
		t.Fatalf("opening the invitation: %d", resp.Status)
	}
	if got := lecturer.text("#invitation"); !strings.Contains(got, "as a lecturer, by ") {
		t.Fatalf("the invitation page says %q", got)
	}
	lecturer.screenshot("invitation-accept", false)
	lecturer.screenshot("invitation-accept", true)
	lecturer.typeInto("#name", "Lee Lecturer")
	lecturer.typeInto("#password", "lee-password-1")
	lecturer.submit("#accept", http.StatusOK)
	if loc := lecturer.location(); loc != academy+"/admin" {
		t.Fatalf("after accepting the lecturer is at %s, want the admin area", loc)
	}
	if got := lecturer.text(".account-menu .who"); got != invitee {
		t.Fatalf("signed in as %q, want %s", got, invitee)
	}

	owner.navigate(academy + "/admin/members")
	if owner.exists(`#invitations-table tr[data-email="` + invitee + `"]`) {
		t.Fatal("the accepted invitation is still pending")
	}
	if !strings.Contains(owner.text("#members-table"), invitee) {
		t.Fatal("the new lecturer is not among the members")
	}
}
