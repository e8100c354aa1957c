package integration

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/lectern/lectern/internal/demo"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// invitationRowOf is the members page's row of the invitation of email.
func invitationRowOf(t *testing.T, body, email string) string {
	t.Helper()
	i := strings.Index(body, `data-email="`+email+`"`)
	if i < 0 {
		t.Fatalf("no invitation row of %s:\n%s", email, webExcerpt(body))
	}
	return body[i : i+strings.Index(body[i:], "</tr>")]
}

// membersTable is the members page's table of members.
func membersTable(body string) string {
	i := strings.Index(body, `id="members-table"`)
	if i < 0 {
		return ""
	}
	return body[i : i+strings.Index(body[i:], "</table>")]
}

// A pending invitation to be an owner is an owner's to change: an admin who
// sends the invite form again with the same address and another role is
// refused (403) and the owner's invitation keeps its role and its link.
// The admin sees no Resend or Revoke on that row (they would answer 403),
// but does on the others.
func TestWebAdminCannotRewriteOwnerInvitation(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	academy := ts.academy()
	site := webAcademy(t, ts)
	if _, err := ts.app.Platform.GrantRole(t.Context(), site.ID, demo.OutsiderEmail, storage.RoleAdmin); err != nil {
		t.Fatal(err)
	}
	owner := webSignIn(t, ts, academy, demo.OwnerEmail, demo.OwnerPassword)
	admin := webSignIn(t, ts, academy, demo.OutsiderEmail, demo.OutsiderPassword)

	boss, student := uniqueEmail("boss"), uniqueEmail("pupil")
	for email, role := range map[string]string{boss: storage.RoleOwner, student: storage.RoleStudent} {
		if res := owner.submitForm(academy+"/admin/members", "invite-form", url.Values{"email": {email}, "role": {role}}); res.Status != http.StatusSeeOther {
			t.Fatalf("the owner invites %s as %s: %d\n%s", email, role, res.Status, webExcerpt(res.Body))
		}
	}
	before, unchanged := ownerInvitationKept(t, ts, site.ID, boss)

	// The admin's page: no actions on the owner invitation, both on the other.
	page := admin.expect("/admin/members", http.StatusOK).Body
	id := fmt.Sprint(before.ID)
	if row := invitationRowOf(t, page, boss); strings.Contains(row, "/invitations/"+id+"/resend") || strings.Contains(row, "/invitations/"+id+"/revoke") ||
		!strings.Contains(row, "Only an owner can resend or revoke an invitation to be an owner.") {
		t.Errorf("the admin is offered actions on the owner invitation:\n%s", row)
	}
	if row := invitationRowOf(t, page, student); !strings.Contains(row, "/resend") || !strings.Contains(row, "/revoke") {
		t.Errorf("the admin is not offered actions on a student invitation:\n%s", row)
	}
	if row := invitationRowOf(t, owner.expect("/admin/members", http.StatusOK).Body, boss); !strings.Contains(row, "/invitations/"+id+"/resend") {
		t.Errorf("the owner is not offered Resend on the owner invitation:\n%s", row)
	}

	// The invite form with the same address and a lesser role: 403.
	for _, role := range []string{storage.RoleStudent, storage.RoleAdmin} {
		res := admin.submitForm(academy+"/admin/members", "invite-form", url.Values{"email": {strings.ToUpper(boss)}, "role": {role}})
		if res.Status != http.StatusForbidden || !strings.Contains(res.Body, "Only an owner can change an invitation to be an owner.") {
			t.Fatalf("the admin re-invites the owner invitation as %s: %d\n%s", role, res.Status, webExcerpt(res.Body))
		}
		unchanged("the admin's invite form")
	}

	// The owner may change it.
	if res := owner.submitForm(academy+"/admin/members", "invite-form", url.Values{"email": {boss}, "role": {storage.RoleAdmin}}); res.Status != http.StatusSeeOther {
		t.Fatalf("the owner changes the owner invitation: %d\n%s", res.Status, webExcerpt(res.Body))
	}
	if inv, err := ts.app.Store.PendingInvitationByEmail(t.Context(), site.ID, boss); err != nil || inv.Role != storage.RoleAdmin {
		t.Fatalf("the owner's change: %+v, %v", inv, err)
	}
}

// A page number past the end of the members list shows the last page, as
// every other list does.
func TestWebMembersPastTheEnd(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	academy := ts.academy()
	site := webAcademy(t, ts)
	owner := webSignIn(t, ts, academy, demo.OwnerEmail, demo.OwnerPassword)

	rows := func(body string) int { return strings.Count(body, `data-label="Since"`) }
	first := owner.expect("/admin/members", http.StatusOK).Body
	n := rows(first)
	if n == 0 || n > 20 {
		t.Fatalf("the members page lists %d members", n)
	}
	for _, page := range []string{"2", "1000001", "99999999999999999999"} {
		if body := owner.expect("/admin/members?page="+page, http.StatusOK).Body; rows(body) != n {
			t.Fatalf("page %s lists %d members, want the last (only) page's %d:\n%s", page, rows(body), n, webExcerpt(body))
		}
	}

	// 25 members: page 3 (an old link) is page 2, the last five.
	for i := n; i < 25; i++ {
		email := fmt.Sprintf("member-%02d-%s@example.test", i, randomHex(4))
		if err := ts.app.Store.CreateUser(context.Background(), &storage.User{ID: "usr_members_" + randomHex(8), Email: email, Name: "Member", PasswordHash: "x"}); err != nil {
			t.Fatal(err)
		}
		if _, err := ts.app.Platform.GrantRole(t.Context(), site.ID, email, storage.RoleStudent); err != nil {
			t.Fatal(err)
		}
	}
	second := owner.expect("/admin/members?page=2", http.StatusOK).Body
	for _, page := range []string{"3", "99"} {
		body := owner.expect("/admin/members?page="+page, http.StatusOK).Body
		if rows(body) != 5 || !strings.Contains(body, "Showing 21–25 of 25") || !strings.Contains(body, `href="/admin/members"`) {
			t.Fatalf("page %s lists %d members, want the last 5 of 25:\n%s", page, rows(body), webExcerpt(body))
		}
		if membersTable(body) != membersTable(second) {
			t.Errorf("page %s lists other members than page 2", page)
		}
	}
}

// A 7-day invitation, just sent, expires "in 7 days" (the mail says 7).
func TestWebInvitationExpiresIn7Days(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	academy := ts.academy()
	owner := webSignIn(t, ts, academy, demo.OwnerEmail, demo.OwnerPassword)
	invitee := uniqueEmail("soon")
	if res := owner.submitForm(academy+"/admin/members", "invite-form", url.Values{"email": {invitee}, "role": {"student"}}); res.Status != http.StatusSeeOther {
		t.Fatalf("inviting: %d\n%s", res.Status, webExcerpt(res.Body))
	}
	if row := invitationRowOf(t, owner.expect("/admin/members", http.StatusOK).Body, invitee); !strings.Contains(row, ">in 7 days</time>") {
		t.Errorf("a 7-day invitation, just sent:\n%s", row)
	}
}

// The 413 page says what to do about the form that was too large: shorten
// a text form, pick a smaller file for an upload.
func TestWebTooLargeFormWording(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	owner := webSignIn(t, ts, ts.academy(), demo.OwnerEmail, demo.OwnerPassword)
	big := url.Values{"csrf_token": {owner.csrf()}, "email": {strings.Repeat("a", 70000)}, "role": {"student"}}
	page := owner.expectPost("/admin/members", big, http.StatusRequestEntityTooLarge)
	if !strings.Contains(page.Body, "shorten what you entered") || strings.Contains(page.Body, "smaller file") {
		t.Errorf("the 413 page of a text form:\n%s", webExcerpt(page.Body))
	}
	upload := pictureUpload(t, owner, owner.csrf(), "image/png", make([]byte, 3<<20))
	if upload.Status != http.StatusRequestEntityTooLarge || !strings.Contains(upload.Body, "try a smaller file") {
		t.Errorf("the 413 page of an upload: %d\n%s", upload.Status, webExcerpt(upload.Body))
	}
}

// A public application cannot be a resource server; a request that asks
// (the page has no such checkbox for it) is told why, on the page.
func TestWebPublicAppResourceServerRefusal(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	owner := webSignIn(t, ts, ts.academy(), demo.OwnerEmail, demo.OwnerPassword)
	appID, _ := owner.createApp("Public One", "public", "http://127.0.0.1/callback", webMemberScopes...)
	v := webAppValues(owner.csrf(), "Public Two", "http://127.0.0.1/callback", "", "openid")
	v.Set("resource_server", "yes")
	page := owner.expectPost("/admin/developers/apps/"+appID, v, http.StatusBadRequest)
	if msg := webTextByID(t, page.Body, "app-form-error"); !strings.Contains(msg, "only a confidential client can be a resource server") {
		t.Errorf("the refusal says %q", msg)
	}
	if c, err := ts.app.Platform.Application(t.Context(), webAcademy(t, ts).ID, appID); err != nil || c.Name != "Public One" || c.ResourceServer {
		t.Fatalf("the refused edit changed the application: %+v, %v", c, err)
	}
}

// A sender name with a backslash or quotes goes out as the name, quoted,
// of the site's one address (it used to fail every message of the site);
// a name no From header can carry is refused by the form and the admin
// API (422, on the field) and the setting stays as it was.
func TestWebMailSenderName(t *testing.T) {
	ts, mp := accountServer(t, backend{name: "embedded"}, nil)
	origin := ts.open()
	owner := webSignIn(t, ts, origin, demo.OwnerEmail, demo.OwnerPassword)
	for _, name := range []string{`Open School \`, `Open School" <spoof@evil.test>, "X`} {
		res := owner.submitForm(origin+"/admin/settings", "accounts-form", url.Values{"mail_from_name": {name}, "mail_from_address": {"school@open.test"}})
		if res.Status != http.StatusSeeOther {
			t.Fatalf("saving the sender name %q: %d\n%s", name, res.Status, webExcerpt(res.Body))
		}
		invitee := uniqueEmail("sender")
		if res := owner.submitForm(origin+"/admin/members", "invite-form", url.Values{"email": {invitee}, "role": {"student"}}); res.Status != http.StatusSeeOther {
			t.Fatalf("inviting: %d\n%s", res.Status, webExcerpt(res.Body))
		}
		m := mailTo(t, mp, invitee, 1)
		if m.From.Name != name || m.From.Address != "school@open.test" {
			t.Fatalf("sender name %q: the mail came from %+v", name, m.From)
		}
	}

	site, err := ts.app.Store.SiteByID(t.Context(), siteID(t, ts, origin))
	if err != nil {
		t.Fatal(err)
	}
	saved := site.Accounts().MailFromName
	bad := `Schüler \ Lehrer`
	res := owner.submitForm(origin+"/admin/settings", "accounts-form", url.Values{"mail_from_name": {bad}, "mail_from_address": {"school@open.test"}})
	if res.Status != http.StatusUnprocessableEntity {
		t.Fatalf("a name mail cannot carry: %d\n%s", res.Status, webExcerpt(res.Body))
	}
	if msg := webTextByID(t, res.Body, "mail-from-name-error"); !strings.Contains(msg, "leave out the backslash") {
		t.Errorf("the field says %q", msg)
	}
	token := admOwnerToken(t, ts, origin, "school:read", "school:write")
	admProblem(t, admDo(t, ts, http.MethodPatch, origin, "/school", token, map[string]any{"accounts": map[string]any{"mailFromName": bad}}),
		http.StatusUnprocessableEntity, "accounts.mailFromName", "a sender name mail cannot carry, through the admin API")
	admProblem(t, admDo(t, ts, http.MethodPatch, origin, "/school", token, map[string]any{"accounts": map[string]any{"mailFromName": "two\nlines"}}),
		http.StatusUnprocessableEntity, "accounts.mailFromName", "a sender name of two lines, through the admin API")
	if site, err = ts.app.Store.SiteByID(t.Context(), site.ID); err != nil || site.Accounts().MailFromName != saved {
		t.Fatalf("a refused sender name changed the setting: %q, %v", site.Accounts().MailFromName, err)
	}
}

// The admin API refuses an admin the same rewrite of an owner invitation,
// through both of its doors (POST /members and POST /invitations), with a
// problem document (RFC 9457), and still lets them re-invite other
// addresses with another role.
func TestAdminAPICannotRewriteOwnerInvitation(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	academy := ts.academy()
	site := webAcademy(t, ts)
	if _, err := ts.app.Platform.GrantRole(t.Context(), site.ID, demo.OutsiderEmail, storage.RoleAdmin); err != nil {
		t.Fatal(err)
	}
	ownerToken := admOwnerToken(t, ts, academy, "members:read", "members:write")
	boss, student := uniqueEmail("boss"), uniqueEmail("pupil")
	admDo(t, ts, http.MethodPost, academy, "/invitations", ownerToken, map[string]any{"email": boss, "role": "owner"}).want(t, http.StatusCreated, "the owner invites an owner")
	admDo(t, ts, http.MethodPost, academy, "/invitations", ownerToken, map[string]any{"email": student, "role": "student"}).want(t, http.StatusCreated, "the owner invites a student")
	_, unchanged := ownerInvitationKept(t, ts, site.ID, boss)

	token := admOperatorToken(t, ts, academy, demo.OutsiderEmail, demo.OutsiderPassword, "members:read", "members:write")
	for _, path := range []string{"/members", "/invitations"} {
		p := admProblem(t, admDo(t, ts, http.MethodPost, academy, path, token, map[string]any{"email": boss, "role": "student"}), http.StatusForbidden, "",
			"the admin re-invites the owner invitation through POST "+path)
		if p["type"] != "urn:lectern:problem:role-required" || !strings.Contains(fmt.Sprint(p["detail"]), "owner") {
			t.Errorf("POST %s: problem %v", path, p)
		}
		unchanged("POST " + path)
	}
	// The admin still re-invites an address that is not an owner's.
	admDo(t, ts, http.MethodPost, academy, "/invitations", token, map[string]any{"email": student, "role": "lecturer"}).want(t, http.StatusCreated, "the admin re-invites a student as lecturer")
}

// ownerInvitationKept reads the pending owner invitation of email at site
// and returns it with a check that fails the test if it has changed since
// (its id, role or link).
func ownerInvitationKept(t *testing.T, ts *testServer, site tenant.ID, email string) (*storage.Invitation, func(what string)) {
	t.Helper()
	before, err := ts.app.Store.PendingInvitationByEmail(t.Context(), site, email)
	if err != nil {
		t.Fatal(err)
	}
	return before, func(what string) {
		t.Helper()
		inv, err := ts.app.Store.PendingInvitationByEmail(t.Context(), site, email)
		if err != nil || inv.ID != before.ID || inv.Role != storage.RoleOwner || !bytes.Equal(inv.TokenHash, before.TokenHash) {
			t.Fatalf("%s changed the owner invitation: %+v, %v", what, inv, err)
		}
	}
}
