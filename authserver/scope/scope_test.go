package scope_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/lectern/lectern/authserver/scope"
)

// lecturerScopes is DESIGN §5 written out by hand ("lecturer: courses,
// curriculum, lecturers, comments, events, posts, pages, storage"), plus the
// identity scopes, so that a flag flipped in scope.go's table fails here
// instead of silently widening what a lecturer may hand to an agent.
var lecturerScopes = []string{
	"openid", "profile", "email",
	"courses:read", "courses:write",
	"curriculum:read", "curriculum:write",
	"lecturers:read", "lecturers:write",
	"comments:read",
	"events:read", "events:write",
	"posts:read", "posts:write",
	"pages:read", "pages:write",
	"storage:write",
}

// memberScopes are the scopes a member client may ask for (DESIGN §5).
var memberScopes = []string{"openid", "profile", "email", "account:read", "account:write"}

// TestRoleMayGrant decides every role against every scope, for the audience
// each scope belongs to: who may put which scope into a token is the
// authorization decision consent rests on.
func TestRoleMayGrant(t *testing.T) {
	type roleCase struct {
		name  string
		roles []string
		// operator: may the roles grant this operator (or identity) scope
		// to an operator client?
		operator func(name string) bool
		// member: may the roles authorize a member client? nil: not
		// asked, for role names the store never holds (storage.ValidRole
		// admits only the four).
		member *bool
	}
	all := func(string) bool { return true }
	none := func(string) bool { return false }
	lecturer := func(name string) bool { return slices.Contains(lecturerScopes, name) }
	yes, no := new(true), new(false)
	roles := []roleCase{
		{"no role", nil, none, no},
		{"empty role list", []string{}, none, no},
		{"unknown role", []string{"guest"}, none, nil},
		{"role name in another case", []string{"Owner"}, none, nil},
		{"student", []string{"student"}, none, yes},
		{"lecturer", []string{"lecturer"}, lecturer, yes},
		{"admin", []string{"admin"}, all, yes},
		{"owner", []string{"owner"}, all, yes},
		{"student and lecturer", []string{"student", "lecturer"}, lecturer, yes},
		{"lecturer and admin", []string{"lecturer", "admin"}, all, yes},
	}
	for _, rc := range roles {
		for _, s := range scope.All() {
			if s.Audience != scope.AudienceMember {
				t.Run(fmt.Sprintf("%s/operator client/%s", rc.name, s.Name), func(t *testing.T) {
					want := rc.operator(s.Name)
					if got := scope.RoleMayGrant(rc.roles, scope.AudienceOperator, s.Name); got != want {
						t.Errorf("RoleMayGrant(%q, operator, %q) = %v, want %v", rc.roles, s.Name, got, want)
					}
				})
			}
			if s.Audience != scope.AudienceOperator && rc.member != nil {
				t.Run(fmt.Sprintf("%s/member client/%s", rc.name, s.Name), func(t *testing.T) {
					if got := scope.RoleMayGrant(rc.roles, scope.AudienceMember, s.Name); got != *rc.member {
						t.Errorf("RoleMayGrant(%q, member, %q) = %v, want %v", rc.roles, s.Name, got, *rc.member)
					}
				})
			}
		}
	}
	t.Run("unknown scope", func(t *testing.T) {
		// Only owners and admins pass an unknown name; AllowedFor refuses
		// it before consent is reached.
		for _, r := range []string{"lecturer", "student"} {
			if scope.RoleMayGrant([]string{r}, scope.AudienceOperator, "courses:delete") {
				t.Errorf("a %s may grant the unknown scope courses:delete", r)
			}
		}
	})
}

// The lecturer list above must name scopes that exist, or the test would
// pass for a renamed scope.
func TestLecturerScopesExist(t *testing.T) {
	for _, name := range slices.Concat(lecturerScopes, memberScopes) {
		if _, ok := scope.Lookup(name); !ok {
			t.Errorf("%q is not a scope", name)
		}
	}
}

func TestAllowedFor(t *testing.T) {
	for _, s := range scope.All() {
		for _, aud := range []string{scope.AudienceOperator, scope.AudienceMember} {
			want := s.Audience == "" || s.Audience == aud
			if aud == scope.AudienceMember {
				// A member client may ask for exactly these (DESIGN §5).
				want = slices.Contains(memberScopes, s.Name)
			}
			t.Run(aud+"/"+s.Name, func(t *testing.T) {
				if got := scope.AllowedFor(aud, s.Name); got != want {
					t.Errorf("AllowedFor(%s, %s) = %v, want %v", aud, s.Name, got, want)
				}
			})
		}
	}
	for _, name := range []string{"", "courses", "courses:delete", "ACCOUNT:READ", "openid "} {
		if scope.AllowedFor(scope.AudienceOperator, name) || scope.AllowedFor(scope.AudienceMember, name) {
			t.Errorf("the unknown scope %q is allowed", name)
		}
	}
	if scope.AllowedFor(scope.AudienceOperator, scope.AccountRead) {
		t.Error("an operator client may ask for account:read (interface spec: invalid_scope)")
	}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want []string
	}{
		{"empty", "", []string{}},
		{"only spaces", "   ", []string{}},
		{"one", "openid", []string{"openid"}},
		{"spec order kept", "profile openid email", []string{"profile", "openid", "email"}},
		{"duplicates dropped, first kept", "openid profile openid email profile", []string{"openid", "profile", "email"}},
		{"runs of spaces", "  openid   profile ", []string{"openid", "profile"}},
		{"tabs and newlines", "openid\tprofile\r\nemail", []string{"openid", "profile", "email"}},
		{"names are not judged", "courses:delete <script> openid", []string{"courses:delete", "<script>", "openid"}},
		{"case matters", "openid OpenID", []string{"openid", "OpenID"}},
		{"percent-encoded space is not a separator", "openid%20profile", []string{"openid%20profile"}},
		{"invalid UTF-8 stays one token", "openid \xff\xfe profile", []string{"openid", "\xff\xfe", "profile"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := scope.Parse(tc.in)
			if got == nil {
				got = []string{}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Parse(%q) (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

func TestJoinIsParseInverse(t *testing.T) {
	names := scope.Names()
	if got := scope.Parse(scope.Join(names)); !slices.Equal(got, names) {
		t.Errorf("Parse(Join(Names())) = %q", got)
	}
	if got := scope.Join(nil); got != "" {
		t.Errorf("Join(nil) = %q", got)
	}
}

// FuzzParse: whatever a client sends as scope, Parse returns distinct,
// non-empty tokens without whitespace, each one a field of the input, in
// the order they first appear, and parsing its own output changes nothing.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "openid profile", "openid openid", " a\tb\nc ", "\xff", "a\u00a0b", "account:read account:write courses:read"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := scope.Parse(s)
		fields := strings.Fields(s)
		seen := map[string]bool{}
		var wantOrder []string
		for _, f := range fields {
			if !seen[f] {
				seen[f] = true
				wantOrder = append(wantOrder, f)
			}
		}
		if !slices.Equal(got, wantOrder) {
			t.Fatalf("Parse(%q) = %q, want the distinct fields in first-seen order %q", s, got, wantOrder)
		}
		for _, tok := range got {
			if tok == "" {
				t.Fatalf("Parse(%q) returned an empty token", s)
			}
			if strings.IndexFunc(tok, unicode.IsSpace) >= 0 {
				t.Fatalf("Parse(%q) returned %q, which holds whitespace", s, tok)
			}
			if utf8.ValidString(s) && !utf8.ValidString(tok) {
				t.Fatalf("Parse(%q) split a character: %q", s, tok)
			}
		}
		if again := scope.Parse(scope.Join(got)); !slices.Equal(again, got) {
			t.Fatalf("Parse(Join(Parse(%q))) = %q, want %q", s, again, got)
		}
	})
}
