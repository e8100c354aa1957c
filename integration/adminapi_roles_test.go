package integration

import (
	"net/http"
	"slices"
	"testing"

	"github.com/lectern/lectern/internal/demo"
)

// Roles are checked on every request: a person whose operator role is
// removed is refused at once, with the token they already hold; lecturers
// only for lecturer scopes; admins cannot touch owners; the last owner
// stays.
func TestAdminRolesCheckedPerRequest(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, nil)
		academy, _ := admSites(t, ts)
		owner := admOwnerToken(t, ts, ts.academy(), "members:read", "members:write", "courses:write")
		outsider := admDo(t, ts, http.MethodPost, ts.academy(), "/members", owner, map[string]any{"email": demo.OutsiderEmail, "role": "admin"}).
			want(t, http.StatusOK, "make the outsider an admin").obj(t)
		outsiderID := outsider["userId"].(string)

		admin := admOperatorToken(t, ts, ts.academy(), demo.OutsiderEmail, demo.OutsiderPassword,
			"courses:read", "courses:write", "students:read", "members:read", "members:write")
		admDo(t, ts, http.MethodPost, ts.academy(), "/courses", admin, map[string]any{"slug": "by-admin", "title": "By the admin"}).
			want(t, http.StatusCreated, "the admin creates a course")

		// Admins cannot change owners, nor make them.
		ownerUser, err := ts.app.Store.UserByEmail(t.Context(), demo.OwnerEmail)
		if err != nil {
			t.Fatal(err)
		}
		admProblem(t, admDo(t, ts, http.MethodDelete, ts.academy(), "/members/"+ownerUser.ID+"/roles/owner", admin, nil), http.StatusForbidden, "", "an admin removes the owner")
		admProblem(t, admDo(t, ts, http.MethodPost, ts.academy(), "/members", admin, map[string]any{"email": demo.LecturerEmail, "role": "owner"}), http.StatusForbidden, "", "an admin makes an owner")
		admProblem(t, admDo(t, ts, http.MethodPost, ts.academy(), "/members", admin, map[string]any{"email": demo.OwnerEmail, "role": "student"}), http.StatusForbidden, "", "an admin adds a role to an owner")
		if roles, _ := ts.app.Store.RolesAt(t.Context(), academy.ID, ownerUser.ID); slices.Contains(roles, "student") {
			t.Fatalf("an admin changed the owner's roles: %v", roles)
		}
		// The last owner stays one, even by their own hand.
		admProblem(t, admDo(t, ts, http.MethodDelete, ts.academy(), "/members/"+ownerUser.ID+"/roles/owner", owner, nil), http.StatusConflict, "", "the last owner steps down")

		// Demoted to lecturer: lecturer scopes still work, the others stop at once.
		admDo(t, ts, http.MethodPost, ts.academy(), "/members", owner, map[string]any{"email": demo.OutsiderEmail, "role": "lecturer"}).want(t, http.StatusOK, "add lecturer")
		if roles, err := ts.app.Platform.RolesAt(t.Context(), academy.ID, outsiderID); err != nil || !slices.Contains(roles, "admin") {
			t.Fatalf("cached roles before the change: %v, %v", roles, err) // now cached
		}
		admDo(t, ts, http.MethodDelete, ts.academy(), "/members/"+outsiderID+"/roles/admin", owner, nil).want(t, http.StatusOK, "remove admin")
		if roles, err := ts.app.Platform.RolesAt(t.Context(), academy.ID, outsiderID); err != nil || slices.Contains(roles, "admin") {
			t.Fatalf("the platform's cached roles after removing admin: %v, %v", roles, err)
		}
		admDo(t, ts, http.MethodGet, ts.academy(), "/courses", admin, nil).want(t, http.StatusOK, "a lecturer reads courses")
		p := admProblem(t, admDo(t, ts, http.MethodGet, ts.academy(), "/students", admin, nil), http.StatusForbidden, "", "a lecturer reads students")
		if p["type"] != "urn:lectern:problem:role-required" {
			t.Fatalf("problem type %v", p["type"])
		}
		admProblem(t, admDo(t, ts, http.MethodPost, ts.academy(), "/members", admin, map[string]any{"email": demo.LecturerEmail, "role": "admin"}), http.StatusForbidden, "", "a lecturer grants roles")

		// No operator role at all: every write and read stops.
		admDo(t, ts, http.MethodDelete, ts.academy(), "/members/"+outsiderID+"/roles/lecturer", owner, nil).want(t, http.StatusOK, "remove lecturer")
		admProblem(t, admDo(t, ts, http.MethodPost, ts.academy(), "/courses", admin, map[string]any{"slug": "too-late", "title": "Too late"}), http.StatusForbidden, "", "a removed admin writes")
		admProblem(t, admDo(t, ts, http.MethodGet, ts.academy(), "/courses", admin, nil), http.StatusForbidden, "", "a removed admin reads")

		// The role changes were audited with the owner as actor.
		var granted, revoked int
		for _, e := range admAudit(t, ts, *academy) {
			switch e.Action {
			case "role.granted":
				granted++
			case "role.revoked":
				revoked++
				if e.Actor != ownerUser.ID || e.Target != "user:"+outsiderID {
					t.Errorf("role.revoked by %s on %s", e.Actor, e.Target)
				}
			}
		}
		if granted != 2 || revoked != 2 {
			t.Errorf("audit: %d role.granted, %d role.revoked; want 2 and 2", granted, revoked)
		}
	})
}

// The demo lecturer (a lecturer at Demo Academy) works with lecturer
// scopes, and a lecturer's token never carries the others.
func TestAdminLecturer(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	tok := admOperatorToken(t, ts, ts.academy(), demo.LecturerEmail, demo.LecturerPassword, "courses:read", "curriculum:write", "posts:write", "students:read")
	admDo(t, ts, http.MethodGet, ts.academy(), "/courses", tok, nil).want(t, http.StatusOK, "lecturer lists courses")
	admDo(t, ts, http.MethodPost, ts.academy(), "/posts", tok, map[string]any{"slug": "lecture-notes", "title": "Notes"}).want(t, http.StatusCreated, "lecturer posts")
	admInsufficientScope(t, admDo(t, ts, http.MethodGet, ts.academy(), "/students", tok, nil), "students:read", "lecturer lists students")
}
