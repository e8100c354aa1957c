package memberapi

import (
	"context"
	"sync"
	"time"

	"github.com/lectern/lectern/authserver/bearer"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// request is the state of one GraphQL request: who asks, where, and what
// was loaded already. Resolvers run concurrently (up to
// Limits.MaxParallelism), so everything loaded lazily is guarded.
type request struct {
	store Store
	now   func() time.Time
	site  *tenant.Site
	token *bearer.Token

	user    memo[*storage.User]
	schools memo[[]storage.UserSiteRoles]
}

// userID is the signed-in member: the token's subject. Every read and write
// of the API is for this user at this site.
func (rq *request) userID() string { return rq.token.Subject }

// need is the resolvers' own scope check. The handler already refused
// operations whose token lacks the scope (403 before execution); this keeps
// a resolver safe should it ever be reached another way.
func (rq *request) need(scope string) error {
	if rq.token.HasScope(scope) {
		return nil
	}
	return &fieldError{code: CodeForbidden, message: "the access token lacks the scope " + scope}
}

func (rq *request) loadUser(ctx context.Context) (*storage.User, error) {
	return rq.user.get(func() (*storage.User, error) {
		u, err := rq.store.UserByID(ctx, rq.userID())
		if err != nil {
			return nil, storeError(err, "the signed-in member no longer exists")
		}
		return u, nil
	})
}

func (rq *request) loadSchools(ctx context.Context) ([]storage.UserSiteRoles, error) {
	return rq.schools.get(func() ([]storage.UserSiteRoles, error) {
		s, err := rq.store.SitesOfUser(ctx, rq.userID())
		if err != nil {
			return nil, storeError(err, "")
		}
		return s, nil
	})
}

type requestKey struct{}

func withRequest(ctx context.Context, rq *request) context.Context {
	return context.WithValue(ctx, requestKey{}, rq)
}

// requestFrom returns the request of ctx. The handler always sets it
// before executing; a resolver without one is a wiring mistake.
func requestFrom(ctx context.Context) *request {
	rq, ok := ctx.Value(requestKey{}).(*request)
	if !ok {
		panic("memberapi: resolver called without a request in its context")
	}
	return rq
}

// memo loads a value once per request, for resolvers running concurrently
// (aliases of viewer, name and email beside each other). A failed load is
// remembered too: the request answers the same error everywhere.
type memo[T any] struct {
	mu   sync.Mutex
	done bool
	v    T
	err  error
}

func (m *memo[T]) get(load func() (T, error)) (T, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.done {
		m.v, m.err = load()
		m.done = true
	}
	return m.v, m.err
}
