package authserver

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/lectern/lectern/authserver/scope"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// Client is a registered client as the authorization server sees it. It
// implements op.Client so that op's token pipeline accepts it.
type Client struct {
	storage.Client
	// DocumentHost is the host of a Client ID Metadata Document client.
	DocumentHost string
}

var _ op.Client = (*Client)(nil)

// Public reports whether the client authenticates with "none".
func (c *Client) Public() bool { return c.Type != storage.ClientConfidential }

// AllowsScope reports whether the client may request name: a scope of its
// audience (or an identity scope) that it registered for.
func (c *Client) AllowsScope(name string) bool {
	return scope.AllowedFor(c.Audience, name) && slices.Contains(c.Scopes, name)
}

// checkSecret compares a presented secret with the stored SHA-256 hash in
// constant time. Client secrets are 256-bit random values, so a fast hash is
// enough; argon2 is for passwords people choose.
func (c *Client) checkSecret(secret string) bool {
	if len(c.SecretHash) != sha256.Size || secret == "" {
		return false
	}
	sum := sha256.Sum256([]byte(secret))
	return subtle.ConstantTimeCompare(sum[:], c.SecretHash) == 1
}

// GetID implements op.Client.
func (c *Client) GetID() string { return c.ClientID }

// RedirectURIs implements op.Client.
func (c *Client) RedirectURIs() []string { return c.Client.RedirectURIs }

// PostLogoutRedirectURIs implements op.Client.
func (c *Client) PostLogoutRedirectURIs() []string { return nil }

// ApplicationType implements op.Client.
func (c *Client) ApplicationType() op.ApplicationType {
	if c.Client.ApplicationType == "web" {
		return op.ApplicationTypeWeb
	}
	return op.ApplicationTypeNative
}

// AuthMethod implements op.Client.
func (c *Client) AuthMethod() oidc.AuthMethod {
	if c.Public() {
		return oidc.AuthMethodNone
	}
	return oidc.AuthMethodPost
}

// ResponseTypes implements op.Client.
func (c *Client) ResponseTypes() []oidc.ResponseType {
	return []oidc.ResponseType{oidc.ResponseTypeCode}
}

// GrantTypes implements op.Client.
func (c *Client) GrantTypes() []oidc.GrantType {
	return []oidc.GrantType{oidc.GrantTypeCode, oidc.GrantTypeRefreshToken}
}

// LoginURL implements op.Client; our authorize handler does not use it.
func (c *Client) LoginURL(id string) string { return "/login?auth_request=" + id }

// AccessTokenType implements op.Client.
func (c *Client) AccessTokenType() op.AccessTokenType { return op.AccessTokenTypeJWT }

// IDTokenLifetime implements op.Client.
func (c *Client) IDTokenLifetime() time.Duration { return IDTokenLifetime }

// DevMode implements op.Client.
func (c *Client) DevMode() bool { return false }

// RestrictAdditionalIdTokenScopes implements op.Client.
func (c *Client) RestrictAdditionalIdTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}

// RestrictAdditionalAccessTokenScopes implements op.Client.
func (c *Client) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}

// IsScopeAllowed implements op.Client.
func (c *Client) IsScopeAllowed(name string) bool { return c.AllowsScope(name) }

// IDTokenUserinfoClaimsAssertion implements op.Client.
func (c *Client) IDTokenUserinfoClaimsAssertion() bool { return true }

// ClockSkew implements op.Client.
func (c *Client) ClockSkew() time.Duration { return 0 }

// ClientSource resolves client IDs that are not rows of the site, such as
// Client ID Metadata Document URLs. It returns storage.ErrNotFound for IDs
// it does not handle.
type ClientSource interface {
	Client(ctx context.Context, site *tenant.Site, clientID string) (*Client, error)
}

// clientCache keeps clients in memory for a short while: they are read on
// every authorize and token request and change rarely. Changes are
// announced (Invalidate); the TTL bounds staleness when an announcement is
// missed.
type clientCache struct {
	store storage.ClientStore
	ttl   time.Duration
	now   func() time.Time

	mu      sync.RWMutex
	entries map[clientKey]clientEntry

	// hits, misses and evictions feed the cache's hit-rate metric.
	hits, misses, evictions atomic.Uint64
}

type clientKey struct {
	site tenant.ID
	id   string
}

type clientEntry struct {
	client  *Client // nil: no such client
	expires time.Time
}

const maxCachedClients = 50000

func (cc *clientCache) get(ctx context.Context, site *tenant.Site, clientID string) (*Client, error) {
	k := clientKey{site.ID, clientID}
	now := cc.now()
	cc.mu.RLock()
	e, ok := cc.entries[k]
	cc.mu.RUnlock()
	if ok && now.Before(e.expires) {
		cc.hits.Add(1)
		if e.client == nil {
			return nil, storage.ErrNotFound
		}
		return e.client, nil
	}
	cc.misses.Add(1)
	row, err := cc.store.ClientByID(ctx, site.ID, clientID)
	var c *Client
	switch {
	case err == nil:
		c = &Client{Client: *row}
	case errors.Is(err, storage.ErrNotFound):
	default:
		return nil, err
	}
	ttl := cc.ttl
	if c == nil {
		ttl = 5 * time.Second
	}
	cc.mu.Lock()
	if len(cc.entries) >= maxCachedClients {
		cc.evictions.Add(uint64(len(cc.entries)))
		clear(cc.entries)
	}
	cc.entries[k] = clientEntry{client: c, expires: now.Add(ttl)}
	cc.mu.Unlock()
	if c == nil {
		return nil, storage.ErrNotFound
	}
	return c, nil
}

// invalidate drops a client (clientID "" drops the whole site).
func (cc *clientCache) invalidate(site tenant.ID, clientID string) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if clientID != "" {
		delete(cc.entries, clientKey{site, clientID})
		return
	}
	for k := range cc.entries {
		if k.site == site {
			delete(cc.entries, k)
		}
	}
}

// invalidateAll drops every cached client.
func (cc *clientCache) invalidateAll() {
	cc.mu.Lock()
	clear(cc.entries)
	cc.mu.Unlock()
}

// ClientError explains why a client ID could not be resolved (for example a
// Client ID Metadata Document that failed to fetch or validate). It is shown
// on the authorization error page, never sent to a redirect URI.
type ClientError struct{ Description string }

func (e *ClientError) Error() string { return "client: " + e.Description }

// ClientCacheStats counts look-ups of the in-process client cache.
type ClientCacheStats struct {
	Hits, Misses, Evictions uint64
	Entries                 int
}

// ClientCacheStats returns the client cache's counters, for metrics.
func (s *Server) ClientCacheStats() ClientCacheStats {
	cc := s.clients
	cc.mu.RLock()
	n := len(cc.entries)
	cc.mu.RUnlock()
	return ClientCacheStats{Hits: cc.hits.Load(), Misses: cc.misses.Load(), Evictions: cc.evictions.Load(), Entries: n}
}
