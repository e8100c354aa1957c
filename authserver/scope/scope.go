package scope

import (
	"slices"
	"strings"
)

// Identity scopes (OpenID Connect).
const (
	OpenID  = "openid"
	Profile = "profile"
	Email   = "email"
)

// Member scopes (the member audience only).
const (
	AccountRead  = "account:read"
	AccountWrite = "account:write"
)

// Audiences of clients and tokens.
const (
	AudienceOperator = "operator"
	AudienceMember   = "member"
)

// Scope describes one scope.
type Scope struct {
	Name string
	// Audience is AudienceOperator, AudienceMember, or "" for identity
	// scopes, which both audiences may request.
	Audience string
	// Description is what the consent page says the client may do.
	Description string
	// Lecturer reports whether a lecturer may grant it (DESIGN §5); owners
	// and admins may grant every operator scope.
	Lecturer bool
}

// All lists every scope in the order the metadata and the spec list them.
var all = []Scope{
	{OpenID, "", "Confirm who you are", true},
	{Profile, "", "See your name and profile picture", true},
	{Email, "", "See your e-mail address", true},
	{"courses:read", AudienceOperator, "View the school's courses, including drafts", true},
	{"courses:write", AudienceOperator, "Create, edit, publish and delete courses", true},
	{"students:read", AudienceOperator, "View students and their enrollments", false},
	{"students:write", AudienceOperator, "Enroll and unenroll students and change their access", false},
	{"members:read", AudienceOperator, "View the people who have roles at the school", false},
	{"members:write", AudienceOperator, "Grant and remove roles at the school", false},
	{"analytics:read", AudienceOperator, "View sales and enrollment reports", false},
	{"curriculum:read", AudienceOperator, "View course sections and lectures", true},
	{"curriculum:write", AudienceOperator, "Edit, add and reorder sections and lectures", true},
	{"orders:read", AudienceOperator, "View orders, with coupons and refunds", false},
	{"school:read", AudienceOperator, "View the school's settings", false},
	{"school:write", AudienceOperator, "Change the school's settings and beta features", false},
	{"appearance:read", AudienceOperator, "View the school's theme and logo", false},
	{"appearance:write", AudienceOperator, "Change the school's theme and logo", false},
	{"events:read", AudienceOperator, "View events", true},
	{"events:write", AudienceOperator, "Create and change events", true},
	{"membership_plans:read", AudienceOperator, "View membership plans", false},
	{"membership_plans:write", AudienceOperator, "Create and change membership plans", false},
	{"coupons:read", AudienceOperator, "View coupons", false},
	{"coupons:write", AudienceOperator, "Create and change coupons", false},
	{"posts:read", AudienceOperator, "View posts", true},
	{"posts:write", AudienceOperator, "Write and change posts", true},
	{"subscriptions:read", AudienceOperator, "View subscriptions", false},
	{"subscriptions:write", AudienceOperator, "Change subscriptions", false},
	{"digital_products:read", AudienceOperator, "View digital products", false},
	{"digital_products:write", AudienceOperator, "Create and change digital products", false},
	{"comments:read", AudienceOperator, "Read comments", true},
	{"lecturers:read", AudienceOperator, "View lecturers", true},
	{"lecturers:write", AudienceOperator, "Add and change lecturers", true},
	{"storage:write", AudienceOperator, "Upload files", true},
	{"forms:read", AudienceOperator, "View form submissions", false},
	{"pages:read", AudienceOperator, "View pages", true},
	{"pages:write", AudienceOperator, "Create and change pages", true},
	{AccountRead, AudienceMember, "View your enrollments, progress, purchases and notifications", false},
	{AccountWrite, AudienceMember, "Mark your notifications read and change notification settings", false},
}

var byName = func() map[string]Scope {
	m := make(map[string]Scope, len(all))
	for _, s := range all {
		m[s.Name] = s
	}
	return m
}()

// All returns every scope, in spec order. The slice is a copy.
func All() []Scope { return slices.Clone(all) }

// Names returns the name of every scope, in spec order.
func Names() []string {
	out := make([]string, len(all))
	for i, s := range all {
		out[i] = s.Name
	}
	return out
}

// Lookup returns the scope called name.
func Lookup(name string) (Scope, bool) {
	s, ok := byName[name]
	return s, ok
}

// IsIdentity reports whether name is openid, profile or email.
func IsIdentity(name string) bool { return name == OpenID || name == Profile || name == Email }

// IsOperator reports whether name is an operator scope.
func IsOperator(name string) bool { return byName[name].Audience == AudienceOperator }

// IsMember reports whether name is a member (account) scope.
func IsMember(name string) bool { return byName[name].Audience == AudienceMember }

// IsRead reports whether name only reads: identity scopes and *:read.
func IsRead(name string) bool { return IsIdentity(name) || strings.HasSuffix(name, ":read") }

// MemberDefault is what a member client gets when it registers without a
// scope: the least privilege a member-tool client needs (DESIGN §6).
func MemberDefault() []string {
	return []string{OpenID, Profile, Email, AccountRead, AccountWrite}
}

// OperatorScopes returns every operator scope.
func OperatorScopes() []string {
	var out []string
	for _, s := range all {
		if s.Audience == AudienceOperator {
			out = append(out, s.Name)
		}
	}
	return out
}

// AllowedFor reports whether a client of audience may request name:
// identity scopes always, otherwise only scopes of its own audience.
func AllowedFor(audience, name string) bool {
	s, ok := byName[name]
	return ok && (s.Audience == "" || s.Audience == audience)
}

// RoleMayGrant reports whether a user holding roles at a site may authorize
// name for a client of audience (DESIGN §5): anyone with a role may authorize
// a member client; operator scopes need an operator role, and lecturers only
// the lecturer subset.
func RoleMayGrant(roles []string, audience, name string) bool {
	if len(roles) == 0 {
		return false
	}
	if audience == AudienceMember {
		return true
	}
	for _, r := range roles {
		switch r {
		case "owner", "admin":
			return true
		case "lecturer":
			if byName[name].Lecturer {
				return true
			}
		}
	}
	return false
}

// Parse splits a space-separated scope parameter (RFC 6749 §3.3), dropping
// duplicates and keeping the first-seen order. It does not judge the names.
func Parse(s string) []string {
	fields := strings.Fields(s)
	out := fields[:0]
	for _, f := range fields {
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// Join is the inverse of Parse.
func Join(scopes []string) string { return strings.Join(scopes, " ") }

// Key is the message ID of the scope's consent wording in the catalogs of
// package i18n ("scope.courses:read"); Description is its English text.
func (s Scope) Key() string { return "scope." + s.Name }
