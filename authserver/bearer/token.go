package bearer

import (
	"slices"
	"strings"
	"time"

	"github.com/lectern/lectern/tenant"
)

// Token is a verified, unrevoked access token. A *Token returned by Verify
// may be shared with other requests presenting the same token and must be
// treated as read-only (Scopes included).
type Token struct {
	Site     tenant.ID
	Subject  string
	ClientID string
	GrantID  string
	JTI      string
	// Audience is the site's resource the token was accepted for.
	Audience string
	Scopes   []string
	IssuedAt time.Time
	Expiry   time.Time
	// AuthTime is when the user authenticated; zero when the token does not
	// say.
	AuthTime time.Time
}

// HasScope reports whether the token carries scope s.
func (t *Token) HasScope(s string) bool { return slices.Contains(t.Scopes, s) }

// Require returns nil when the token carries every one of scopes, and
// otherwise a 403 insufficient_scope *Error whose Scope lists scopes (all
// the operation needs) and whose description names the missing ones.
func (t *Token) Require(scopes ...string) error {
	var missing []string
	for _, s := range scopes {
		if !t.HasScope(s) {
			missing = append(missing, s)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	e := InsufficientScope(scopes...)
	e.Description = "the access token lacks the scope " + strings.Join(missing, " ")
	return e
}
