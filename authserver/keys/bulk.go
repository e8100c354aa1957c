package keys

import (
	"context"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// NewRingKeys generates the first key (active at once) of each new site in
// sites, on at most workers goroutines: P-256 generation and sealing are
// CPU work, so a bulk import spreads them over the cores. The keys are not
// stored; the caller inserts them with its sites (see
// sqlstore.CreateSitesWithKeys), in the order of sites.
func (m *Manager) NewRingKeys(ctx context.Context, sites []tenant.ID, workers int) ([]*storage.SiteKey, error) {
	out := make([]*storage.SiteKey, len(sites))
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(max(workers, 1))
	now := time.Now()
	for i, site := range sites {
		g.Go(func() error {
			if err := ctx.Err(); err != nil {
				return err
			}
			k, err := m.newKey(site, storage.KeyActive, now, now)
			out[i] = k
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}
