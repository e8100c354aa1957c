package integration

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/lectern/lectern/internal/demo"
)

// An operator adds a student who has no account: the admin API answers 201
// with an invitation, the student gets the mail, follows its link, sets a
// name and password and is a member, signed in, with a verified address.
// Links opened at another site, used twice, revoked or replaced by a
// resend change nothing and say why.
func TestAccountsInvitation(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts, mp := accountServer(t, b, nil)
		academy := ts.academy()
		token := admOwnerToken(t, ts, academy, "members:read", "members:write")

		// An existing account is added as before: 200, the member.
		r := admDo(t, ts, "POST", academy, "/members", token, map[string]any{"email": demo.OutsiderEmail, "role": "student"}).want(t, http.StatusOK, "adding an existing account")
		if m := r.obj(t); m["email"] != demo.OutsiderEmail || m["kind"] != nil {
			t.Fatalf("existing account: %v", m)
		}

		// POST /invitations invites only: an account's address is 409.
		r = admDo(t, ts, "POST", academy, "/invitations", token, map[string]any{"email": demo.OutsiderEmail, "role": "student"}).want(t, http.StatusConflict, "inviting an account's address")
		if p := r.obj(t); !strings.Contains(fmt.Sprint(p["detail"]), "POST /members") {
			t.Fatalf("conflict problem: %v", p)
		}

		invitee := uniqueEmail("invitee")
		r = admDo(t, ts, "POST", academy, "/members", token, map[string]any{"email": strings.ToUpper(invitee), "role": "student"}).want(t, http.StatusCreated, "inviting a new address")
		inv := r.obj(t)
		if inv["kind"] != "invitation" || inv["email"] != invitee || inv["role"] != "student" || inv["status"] != "pending" {
			t.Fatalf("invitation: %v", inv)
		}
		if loc := r.header.Get("Location"); !strings.HasPrefix(loc, "/api/v1/invitations/") {
			t.Fatalf("Location %q", loc)
		}
		var list struct {
			Items []map[string]any `json:"items"`
		}
		admDo(t, ts, "GET", academy, "/invitations", token, nil).want(t, http.StatusOK, "listing invitations").json(t, &list)
		if len(list.Items) != 1 || list.Items[0]["email"] != invitee {
			t.Fatalf("pending invitations: %v", list.Items)
		}

		m := mailTo(t, mp, invitee, 1)
		if m.From.Name != "Demo Academy" || m.From.Address != "no-reply@lectern.test" || !strings.Contains(m.Subject, "Demo Academy") {
			t.Fatalf("invitation mail from %+v, subject %q", m.From, m.Subject)
		}
		if !strings.Contains(m.HTML, "Accept the invitation") || !strings.Contains(m.Text, "as a student") {
			t.Fatalf("invitation mail:\n%s", m.Text)
		}
		link := linkIn(t, m, "/invitations/accept")
		if !strings.HasPrefix(link, academy+"/") {
			t.Fatalf("the link %s is not on the site's origin %s", link, academy)
		}

		// The same link at another site is no link there.
		other := browserAt(t, ts, ts.open())
		if p := other.getURL(onOrigin(link, ts.open())); p.Status != http.StatusBadRequest || !strings.Contains(p.Body, "not valid") {
			t.Fatalf("the invitation at another site: %d\n%s", p.Status, webExcerpt(p.Body))
		}

		person := browserAt(t, ts, academy)
		res := person.submitForm(link, "invitation-form", url.Values{"name": {"Ivy Invitee"}, "password": {"short"}})
		if res.Status != http.StatusUnprocessableEntity || !strings.Contains(res.Body, "at least 8") {
			t.Fatalf("a short password: %d\n%s", res.Status, webExcerpt(res.Body))
		}
		res = person.submitForm(link, "invitation-form", url.Values{"name": {"Ivy Invitee"}, "password": {"ivy-password-1"}})
		if res.Status != http.StatusSeeOther || res.Header.Get("Location") != "/account/connections" {
			t.Fatalf("accepting: %d %s\n%s", res.Status, res.Header.Get("Location"), webExcerpt(res.Body))
		}
		person.expect("/account/connections", http.StatusOK)

		// Used once: the second use is 410 and changes nothing.
		if p := person.getURL(link); p.Status != http.StatusGone || strings.Contains(p.Body, "invitation-form") {
			t.Fatalf("a used invitation: %d\n%s", p.Status, webExcerpt(p.Body))
		}
		admDo(t, ts, "GET", academy, "/invitations", token, nil).want(t, http.StatusOK, "listing invitations").json(t, &list)
		if len(list.Items) != 0 {
			t.Fatalf("an accepted invitation is still pending: %v", list.Items)
		}
		var members struct {
			Items []map[string]any `json:"items"`
		}
		admDo(t, ts, "GET", academy, "/members?role=student&limit=100", token, nil).want(t, http.StatusOK, "members").json(t, &members)
		found := false
		for _, mem := range members.Items {
			found = found || mem["email"] == invitee
		}
		if !found {
			t.Fatalf("%s is not a student after accepting", invitee)
		}

		// The account works for OAuth, and its address is verified.
		tok := ts.memberToken(t, academy, invitee, "ivy-password-1")
		f := newFlow(t, ts, academy, demo.MemberClientID)
		code, _, claims := f.userinfo(tok.AccessToken)
		if code != http.StatusOK || claims["email"] != invitee || claims["email_verified"] != true || claims["name"] != "Ivy Invitee" {
			t.Fatalf("userinfo of the new member: %d %v", code, claims)
		}

		// Revoked: the link stops working.
		revoked := uniqueEmail("revoked")
		id := admDo(t, ts, "POST", academy, "/members", token, map[string]any{"email": revoked, "role": "lecturer"}).want(t, http.StatusCreated, "invite").obj(t)["id"]
		revokedLink := linkIn(t, mailTo(t, mp, revoked, 1), "/invitations/accept")
		admDo(t, ts, "DELETE", academy, "/invitations/"+jsonNumber(id), token, nil).want(t, http.StatusNoContent, "revoking")
		admDo(t, ts, "DELETE", academy, "/invitations/"+jsonNumber(id), token, nil).want(t, http.StatusNotFound, "revoking again")
		if p := browserAt(t, ts, academy).getURL(revokedLink); p.Status != http.StatusGone {
			t.Fatalf("a revoked invitation: %d", p.Status)
		}

		// Resent: a fresh link works, the old one no longer does.
		resent := uniqueEmail("resent")
		id = admDo(t, ts, "POST", academy, "/members", token, map[string]any{"email": resent, "role": "student"}).want(t, http.StatusCreated, "invite").obj(t)["id"]
		first := linkIn(t, mailTo(t, mp, resent, 1), "/invitations/accept")
		admDo(t, ts, "POST", academy, "/invitations/"+jsonNumber(id)+"/resend", token, nil).want(t, http.StatusOK, "resending")
		second := linkIn(t, mailTo(t, mp, resent, 2), "/invitations/accept")
		if first == second {
			t.Fatal("a resend mailed the same link")
		}
		if p := browserAt(t, ts, academy).getURL(first); p.Status != http.StatusBadRequest {
			t.Fatalf("the replaced link: %d", p.Status)
		}
		if p := browserAt(t, ts, academy).getURL(second); p.Status != http.StatusOK {
			t.Fatalf("the new link: %d", p.Status)
		}
		admDo(t, ts, "POST", academy, "/invitations/999999/resend", token, nil).want(t, http.StatusNotFound, "resending an unknown invitation")

		// Expired: 410, nothing changes.
		late := uniqueEmail("late")
		admDo(t, ts, "POST", academy, "/members", token, map[string]any{"email": late, "role": "student"}).want(t, http.StatusCreated, "invite")
		lateLink := linkIn(t, mailTo(t, mp, late, 1), "/invitations/accept")
		if err := ts.app.Store.Exec(t.Context(), "UPDATE invitations SET expires_at = created_at WHERE email = ?", late); err != nil {
			t.Fatal(err)
		}
		lp := browserAt(t, ts, academy)
		if p := lp.getURL(lateLink); p.Status != http.StatusGone || !strings.Contains(p.Body, "expired") {
			t.Fatalf("an expired invitation: %d\n%s", p.Status, webExcerpt(p.Body))
		}

		// An account that appears meanwhile signs in to accept.
		meanwhile := uniqueEmail("meanwhile")
		admDo(t, ts, "POST", academy, "/members", token, map[string]any{"email": meanwhile, "role": "student"}).want(t, http.StatusCreated, "invite")
		mwLink := linkIn(t, mailTo(t, mp, meanwhile, 1), "/invitations/accept")
		if _, err := ts.app.Platform.CreateUser(t.Context(), meanwhile, "Mia", "", "mia-password-1"); err != nil {
			t.Fatal(err)
		}
		mw := browserAt(t, ts, academy)
		if p := mw.submitForm(mwLink, "invitation-form", url.Values{"password": {"wrong-password"}}); p.Status != http.StatusUnauthorized {
			t.Fatalf("signing in to accept with a wrong password: %d", p.Status)
		}
		if p := mw.submitForm(mwLink, "invitation-form", url.Values{"password": {"mia-password-1"}}); p.Status != http.StatusSeeOther {
			t.Fatalf("signing in to accept: %d\n%s", p.Status, webExcerpt(p.Body))
		}

		// Bad input is a problem document, never a stack.
		p := admProblem(t, admDo(t, ts, "POST", academy, "/members", token, map[string]any{"email": "not-an-address", "role": "student"}), http.StatusBadRequest, "body", "a malformed address")
		_ = p
	})
}

func jsonNumber(v any) string {
	f, _ := v.(float64)
	return strconvFormat(f)
}
