package platform

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"time"

	"github.com/lectern/lectern/authserver/clientmeta"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// Revoker revokes grants durably and in the cache (authserver/bearer's
// Verifier), so that their tokens stop working at once.
type Revoker interface {
	RevokeGrant(ctx context.Context, site tenant.ID, grantID string, now time.Time) error
}

// ErrNotApplication: the client is not an OAuth application the site's
// operators manage (a vendor, CIMD or dynamically registered client).
var ErrNotApplication = errors.New("not an application of this site")

// Application returns a member or operator application an operator created
// at the site (source admin).
func (p *Platform) Application(ctx context.Context, site tenant.ID, clientID string) (*storage.Client, error) {
	c, err := p.Store.ClientByID(ctx, site, clientID)
	if err != nil {
		return nil, err
	}
	if c.SiteID == nil || *c.SiteID != site || c.Source != storage.SourceAdmin {
		return nil, fmt.Errorf("%w: %w", storage.ErrNotFound, ErrNotApplication)
	}
	return c, nil
}

// Applications lists the site's operator-created applications.
func (p *Platform) Applications(ctx context.Context, site tenant.ID) ([]storage.Client, error) {
	return p.Store.ListClients(ctx, site, storage.SourceAdmin)
}

// ApplicationChange is an edit of an application; nil fields stay.
type ApplicationChange struct {
	Name         *string
	RedirectURIs []string // nil: unchanged
	Scopes       []string // nil: unchanged
	// ResourceServer nil: unchanged (see clientmeta.ClientSpec).
	ResourceServer *bool
}

// UpdateApplication validates and applies a change. The audience cannot
// change (a member application stays one).
func (p *Platform) UpdateApplication(ctx context.Context, site tenant.ID, clientID string, ch ApplicationChange) (*storage.Client, error) {
	c, err := p.Application(ctx, site, clientID)
	if err != nil {
		return nil, err
	}
	spec := clientmeta.ClientSpec{Name: c.Name, RedirectURIs: c.RedirectURIs, Scopes: c.Scopes, Audience: c.Audience,
		Confidential: c.Type == storage.ClientConfidential, ApplicationType: c.ApplicationType, Source: c.Source, Reviewed: c.Reviewed, CreatedBy: c.CreatedBy,
		ResourceServer: c.ResourceServer}
	if ch.Name != nil {
		spec.Name = *ch.Name
	}
	if ch.RedirectURIs != nil {
		spec.RedirectURIs = ch.RedirectURIs
		spec.ApplicationType = ""
	}
	if ch.Scopes != nil {
		spec.Scopes = ch.Scopes
	}
	if ch.ResourceServer != nil {
		spec.ResourceServer = *ch.ResourceServer
	}
	v, err := clientmeta.ValidateClient(spec)
	if err != nil {
		return nil, err
	}
	c.Name, c.RedirectURIs, c.Scopes, c.ApplicationType = v.Name, v.RedirectURIs, v.Scopes, v.ApplicationType
	c.ResourceServer = spec.ResourceServer
	if err := p.Store.UpdateClient(ctx, c); err != nil {
		return nil, err
	}
	p.announceClient(ctx, site, clientID)
	return c, nil
}

// RotateSecret gives a confidential application a new secret (returned
// once) and invalidates the old one at once.
func (p *Platform) RotateSecret(ctx context.Context, site tenant.ID, clientID string) (string, error) {
	c, err := p.Application(ctx, site, clientID)
	if err != nil {
		return "", err
	}
	if c.Type != storage.ClientConfidential {
		return "", clientmeta.BadMetadata("token_endpoint_auth_method", "a public application has no secret to rotate")
	}
	secret := NewClientSecret()
	sum := sha256.Sum256([]byte(secret))
	c.SecretHash = sum[:]
	if err := p.Store.UpdateClient(ctx, c); err != nil {
		return "", err
	}
	p.announceClient(ctx, site, clientID)
	return secret, nil
}

// DeleteApplication revokes every grant of the application (their tokens
// stop working at once) and deletes it. It returns how many grants it
// revoked.
func (p *Platform) DeleteApplication(ctx context.Context, site tenant.ID, clientID string, rev Revoker, now time.Time) (int, error) {
	if _, err := p.Application(ctx, site, clientID); err != nil {
		return 0, err
	}
	n, err := p.RevokeClientGrants(ctx, site, clientID, rev, now)
	if err != nil {
		return n, err
	}
	if err := p.Store.DeleteClient(ctx, site, clientID); err != nil {
		return n, err
	}
	p.announceClient(ctx, site, clientID)
	return n, nil
}

// RevokeClientGrants revokes every live grant of a client at the site.
func (p *Platform) RevokeClientGrants(ctx context.Context, site tenant.ID, clientID string, rev Revoker, now time.Time) (int, error) {
	grants, _, err := p.Store.LiveGrants(ctx, site, storage.GrantQuery{At: now, ClientID: clientID})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, g := range grants {
		if err := rev.RevokeGrant(ctx, site, g.ID, now); err != nil && !errors.Is(err, storage.ErrNotFound) {
			return n, err
		}
		n++
	}
	return n, nil
}

// ClientsChannel announces that a client changed; messages are
// "<site id>:<client id>".
const ClientsChannel = "lectern:clients"

func (p *Platform) announceClient(ctx context.Context, site tenant.ID, clientID string) {
	if p.Cache == nil {
		return
	}
	msg := fmt.Sprintf("%d:%s", site, clientID)
	if err := p.Cache.Publish(ctx, ClientsChannel, []byte(msg)); err != nil && p.Logger != nil {
		p.Logger.WarnContext(ctx, "client change broadcast failed; replicas see it within 30 s", "err", err)
	}
}
