package platform

import (
	"context"

	"github.com/lectern/lectern/storage"
)

// SetUserPicture records the picture a person uploaded (file in the upload
// store's platform area; empty removes it) and returns the one it replaced,
// whose bytes the caller deletes. The person's cached claims are dropped at
// every site where they hold a role, so the picture claim changes at once
// everywhere.
func (p *Platform) SetUserPicture(ctx context.Context, userID, file string) (string, error) {
	previous, err := p.Store.SetUserPicture(ctx, userID, file)
	if err != nil {
		return "", err
	}
	p.forgetProfiles(ctx, userID)
	return previous, nil
}

// forgetProfiles deletes the user's cached claims at each of their sites.
func (p *Platform) forgetProfiles(ctx context.Context, userID string) {
	if p.Cache == nil {
		return
	}
	sites, err := p.Store.SitesOfUser(ctx, userID)
	if err != nil {
		if p.Logger != nil {
			p.Logger.WarnContext(ctx, "cached claims not cleared: the user's sites could not be read; they expire within a minute", "user", userID, "err", err)
		}
		return
	}
	// One delete per site: a site's keys share a hash tag, different
	// sites' keys may live on different cluster nodes.
	for _, s := range sites {
		if err := p.deleter().Delete(ctx, rolesTTL, storage.ProfileKey(s.SiteID, userID)); err != nil && p.Logger != nil {
			p.Logger.WarnContext(ctx, "cached claims not cleared yet; they are deleted as soon as the cache answers", "user", userID, "site", s.SiteID, "err", err)
		}
	}
}
