package platform

import (
	"context"
	"time"

	"github.com/lectern/lectern/authserver/keys"
	"github.com/lectern/lectern/tenant"
)

// KeyScheduler returns the signing-key rotation scheduler of this process:
// each site's period from its setting (SettingKeyRotationDays), the
// platform's otherwise, and a broadcast on KeysChannel for every change.
func (p *Platform) KeyScheduler(prePublish time.Duration) (*keys.Scheduler, error) {
	return keys.NewScheduler(p.Keys, &keys.SchedulerOptions{
		PrePublish: prePublish,
		PeriodOf:   p.rotationPeriod,
		Announce:   func(ctx context.Context, site tenant.ID) { p.announce(ctx, KeysChannel, site) },
		Logger:     p.Logger,
	})
}

// rotationPeriod is the site's own period, or 0 for the platform's.
func (p *Platform) rotationPeriod(ctx context.Context, site tenant.ID) (time.Duration, error) {
	s, err := p.Store.SiteByID(ctx, site)
	if err != nil {
		return 0, err
	}
	return time.Duration(KeyRotationDays(s)) * 24 * time.Hour, nil
}

// reschedule applies a site's own rotation period to its active key.
func (p *Platform) reschedule(ctx context.Context, site tenant.ID, days int) error {
	if days <= 0 {
		return nil
	}
	return p.Keys.Reschedule(ctx, site, time.Duration(days)*24*time.Hour)
}
