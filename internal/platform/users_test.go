package platform_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lectern/lectern/authserver/password"
	"github.com/lectern/lectern/internal/platform"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

func TestCreateUser(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		u, err := e.p.CreateUser(t.Context(), "  Ada@Example.TEST ", " Ada Lovelace ", "https://example.test/ada.png", "analytical-engine")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(u.ID, "usr_") || len(u.ID) != len("usr_")+26 {
			t.Errorf("user ID %q, want usr_ and 26 characters", u.ID)
		}
		stored, err := e.store.UserByEmail(t.Context(), "ada@example.test")
		if err != nil {
			t.Fatalf("the user cannot be found by e-mail in another case: %v", err)
		}
		if stored.ID != u.ID || stored.Name != "Ada Lovelace" || stored.Picture != "https://example.test/ada.png" {
			t.Errorf("stored %+v", stored)
		}
		if err := password.Verify("analytical-engine", stored.PasswordHash); err != nil {
			t.Errorf("the password does not verify against the stored hash: %v", err)
		}
		if err := password.Verify("analytical-engine!", stored.PasswordHash); !errors.Is(err, password.ErrMismatch) {
			t.Errorf("another password: %v, want ErrMismatch", err)
		}
		if strings.Contains(stored.PasswordHash, "analytical-engine") {
			t.Error("the password is stored in the clear")
		}

		_, err = e.p.CreateUser(t.Context(), "ADA@example.test", "Another Ada", "", "another-password")
		wantErrIs(t, err, storage.ErrConflict, "a second user with the same e-mail in another case")
	})
}

func TestCreateUserRefusesInvalidInput(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		for _, tc := range []struct{ name, email, userName, pw string }{
			{"no @", "ada.example.test", "Ada", "long-enough"},
			{"blank e-mail", "  ", "Ada", "long-enough"},
			{"e-mail over 320 characters", strings.Repeat("a", 310) + "@example.test", "Ada", "long-enough"},
			{"blank name", "ada@example.test", " \t ", "long-enough"},
			{"password of 7 characters", "ada@example.test", "Ada", "1234567"},
			{"password over the maximum", "ada@example.test", "Ada", strings.Repeat("p", password.MaxLength+1)},
			// Four characters in eight bytes: the minimum counts characters.
			{"password of 4 accented characters", "ada@example.test", "Ada", "ääää"},
			{"name not UTF-8", "ada@example.test", "\xff\xfe", "long-enough"},
			{"name with a control character", "ada@example.test", "Ada\x1b[31m", "long-enough"},
			{"name of 201 characters", "ada@example.test", strings.Repeat("ä", 201), "long-enough"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				_, err := e.p.CreateUser(t.Context(), tc.email, tc.userName, "", tc.pw)
				wantErrIs(t, err, platform.ErrInvalid, tc.name)
				if _, err := e.store.UserByEmail(t.Context(), strings.TrimSpace(tc.email)); err == nil {
					t.Error("the refused user was stored")
				}
			})
		}
	})
}

// The bounds count what a person counts: characters for the minimum and
// for names; the maximum of a password is bytes (argon2id's input), and
// says so.
func TestPasswordAndNameBounds(t *testing.T) {
	for _, tc := range []struct {
		name, pw string
		ok       bool
	}{
		{"8 ASCII characters", "12345678", true},
		{"8 accented characters (16 bytes)", "ääääääää", true},
		{"4 accented characters (8 bytes)", "ääää", false},
		{"7 characters", "1234567", false},
		{"1024 bytes", strings.Repeat("p", platform.MaxPassword), true},
		{"1025 bytes", strings.Repeat("p", platform.MaxPassword+1), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := platform.CheckPassword(tc.pw)
			if (err == nil) != tc.ok {
				t.Fatalf("CheckPassword: %v; want accepted: %v", err, tc.ok)
			}
		})
	}
	if err := platform.CheckPassword(strings.Repeat("p", platform.MaxPassword+1)); err == nil || !strings.Contains(err.Error(), "1024 bytes") {
		t.Errorf("the maximum's message: %v; want it to say bytes", err)
	}
	for _, tc := range []struct {
		name, userName string
		ok             bool
	}{
		{"a name", "Zoë Ångström", true},
		{"200 accented characters", strings.Repeat("ä", 200), true},
		{"not UTF-8", "\xff\xfe", false},
		{"a control character", "Bob\x00", false},
		{"a line break", "Bob\nSmith", false},
		{"blank", "  ", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := platform.CheckSignUp(tc.userName, "bob@example.test")
			if (err == nil) != tc.ok {
				t.Fatalf("CheckSignUp(%q): %v; want accepted: %v", tc.userName, err, tc.ok)
			}
		})
	}
}

func TestGrantAndRevokeRole(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		a, b := e.createSite(t, "roles-a"), e.createSite(t, "roles-b")
		u := e.createUser(t, "lecturer@example.test")

		got, err := e.p.GrantRole(t.Context(), a.ID, "Lecturer@Example.test", storage.RoleLecturer)
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != u.ID {
			t.Errorf("GrantRole returned user %s, want %s", got.ID, u.ID)
		}
		if _, err := e.p.GrantRole(t.Context(), a.ID, u.Email, storage.RoleAdmin); err != nil {
			t.Fatal(err)
		}
		wantRoles(t, e, a.ID, u.ID, []string{storage.RoleAdmin, storage.RoleLecturer})
		wantRoles(t, e, b.ID, u.ID, []string{})

		// Granting a role held already changes nothing.
		if _, err := e.p.GrantRole(t.Context(), a.ID, u.Email, storage.RoleAdmin); err != nil {
			t.Errorf("granting a held role again: %v", err)
		}

		if _, err := e.p.RevokeRole(t.Context(), a.ID, u.Email, storage.RoleAdmin); err != nil {
			t.Fatal(err)
		}
		wantRoles(t, e, a.ID, u.ID, []string{storage.RoleLecturer})

		_, err = e.p.RevokeRole(t.Context(), a.ID, u.Email, storage.RoleAdmin)
		wantErrIs(t, err, storage.ErrNotFound, "revoking a role no longer held")
		_, err = e.p.RevokeRole(t.Context(), b.ID, u.Email, storage.RoleLecturer)
		wantErrIs(t, err, storage.ErrNotFound, "revoking at site B a role held at site A")
		wantRoles(t, e, a.ID, u.ID, []string{storage.RoleLecturer})

		_, err = e.p.GrantRole(t.Context(), a.ID, u.Email, "superuser")
		wantErrIs(t, err, platform.ErrInvalid, "an unknown role")
		_, err = e.p.GrantRole(t.Context(), a.ID, "nobody@example.test", storage.RoleStudent)
		wantErrIs(t, err, storage.ErrNotFound, "a user that does not exist")
		_, err = e.p.RevokeRole(t.Context(), a.ID, "nobody@example.test", storage.RoleStudent)
		wantErrIs(t, err, storage.ErrNotFound, "revoking from a user that does not exist")
	})
}

func wantRoles(t *testing.T, e *env, site tenant.ID, userID string, want []string) {
	t.Helper()
	got, err := e.p.RolesAt(t.Context(), site, userID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("roles at site %d (-want +got):\n%s", site, diff)
	}
}

// RolesAt answers from the cache; a role change through the platform drops
// the cached roles and claims at once, so consent never sees a revoked role.
func TestRolesCache(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		s := e.createSite(t, "cache")
		u := e.createUser(t, "member@example.test")
		if _, err := e.p.GrantRole(t.Context(), s.ID, u.Email, storage.RoleStudent); err != nil {
			t.Fatal(err)
		}
		wantRoles(t, e, s.ID, u.ID, []string{storage.RoleStudent})

		// A change made directly in the database is seen only once the
		// cached copy goes: that it is not seen proves the cache answers.
		if err := e.store.GrantRole(t.Context(), s.ID, u.ID, storage.RoleOwner); err != nil {
			t.Fatal(err)
		}
		wantRoles(t, e, s.ID, u.ID, []string{storage.RoleStudent})
		e.p.ForgetRoles(t.Context(), s.ID, u.ID)
		wantRoles(t, e, s.ID, u.ID, []string{storage.RoleOwner, storage.RoleStudent})

		profile := storage.ProfileKey(s.ID, u.ID)
		if err := e.cache.Set(t.Context(), profile, []byte(`{"name":"cached"}`), time.Minute); err != nil {
			t.Fatal(err)
		}
		if _, err := e.p.RevokeRole(t.Context(), s.ID, u.Email, storage.RoleOwner); err != nil {
			t.Fatal(err)
		}
		wantRoles(t, e, s.ID, u.ID, []string{storage.RoleStudent})
		if _, err := e.cache.Get(t.Context(), profile); !errors.Is(err, storage.ErrCacheMiss) {
			t.Errorf("the cached profile survived a role change: %v", err)
		}
		_ = e.cache.Delete(t.Context(), storage.RolesKey(s.ID, u.ID))
	})
}

// A new picture drops the person's cached claims at every site where they
// hold a role, so the picture claim changes at once; other people's stay.
func TestSetUserPicture(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		a, b := e.createSite(t, "pic-a"), e.createSite(t, "pic-b")
		u := e.createUser(t, "pictured@example.test")
		other := e.createUser(t, "other@example.test")
		for _, s := range []*storage.Site{a, b} {
			if _, err := e.p.GrantRole(t.Context(), s.ID, u.Email, storage.RoleStudent); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := e.p.GrantRole(t.Context(), a.ID, other.Email, storage.RoleStudent); err != nil {
			t.Fatal(err)
		}
		keys := []string{storage.ProfileKey(a.ID, u.ID), storage.ProfileKey(b.ID, u.ID), storage.ProfileKey(a.ID, other.ID)}
		for _, k := range keys {
			if err := e.cache.Set(t.Context(), k, []byte(`{"name":"cached"}`), time.Minute); err != nil {
				t.Fatal(err)
			}
		}
		prev, err := e.p.SetUserPicture(t.Context(), u.ID, "abcd.png")
		if err != nil || prev != "" {
			t.Fatalf("SetUserPicture: %q, %v", prev, err)
		}
		for _, k := range keys[:2] {
			if _, err := e.cache.Get(t.Context(), k); !errors.Is(err, storage.ErrCacheMiss) {
				t.Errorf("%s survived the new picture: %v", k, err)
			}
		}
		if _, err := e.cache.Get(t.Context(), keys[2]); err != nil {
			t.Errorf("another person's cached claims went: %v", err)
		}
		if prev, err := e.p.SetUserPicture(t.Context(), u.ID, ""); err != nil || prev != "abcd.png" {
			t.Errorf("removing: %q, %v; want abcd.png replaced", prev, err)
		}
		_ = e.cache.Delete(t.Context(), keys[2])
	})
}
