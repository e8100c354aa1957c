package memberapi

import (
	"context"
	"net/http"

	"github.com/lectern/lectern/authserver/bearer"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// Store is what the Member API reads and changes: the member's own rows at
// one site (storage.MemberStore, whose every method takes the site and the
// user) and, for Viewer, the member's profile and roles across sites.
type Store interface {
	storage.MemberStore
	UserByID(ctx context.Context, id string) (*storage.User, error)
	// SitesOfUser answers Viewer.schools.
	SitesOfUser(ctx context.Context, userID string) ([]storage.UserSiteRoles, error)
	// RolesAt returns the user's roles at the site now. Every request
	// asks (through a cache that role changes clear): a member token works
	// only while its holder has a role at the site.
	RolesAt(ctx context.Context, site tenant.ID, userID string) ([]string, error)
}

// Authenticator verifies the bearer token of a request at the request's
// site. *bearer.Verifier implements it; its errors are *bearer.Error.
type Authenticator interface {
	Authenticate(r *http.Request) (*bearer.Token, error)
}

var (
	_ Store         = storage.Store(nil)
	_ Authenticator = (*bearer.Verifier)(nil)
)
