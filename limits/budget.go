package limits

import (
	"context"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/lectern/lectern/tenant"
)

// Budgets are one limit's per-site token buckets on this replica: each
// site may spend the limit's value per period (bursts up to one period's
// worth) on the expensive endpoints (token, Member API cost, MCP). They
// live in the process, not in the cache: they exist to keep one site from
// taking this replica's CPU, which a shared counter would only make
// slower, and a refusal costs no round trip. With N replicas behind a
// balancer a site may spend N times the value in all.
//
// A request over the budget is shaped, not dropped at once: if the budget
// has room within MaxWait it waits for it (a timer, no CPU) and goes on;
// if not, it is refused after waiting MaxWait, so that a client retrying
// at once cannot spin the server on refusals (a tarpit, as nginx's
// limit_req delays and Cloudflare's slowdowns do).
type Budgets struct {
	cfg  *Config
	name Name
	per  time.Duration

	mu    sync.Mutex
	sites map[tenant.ID]*bucket
}

// MaxWait is the longest a request waits for its site's budget, and how
// long a refusal takes.
const MaxWait = 250 * time.Millisecond

type bucket struct {
	value int
	lim   *rate.Limiter
}

// maxBuckets bounds the buckets kept; beyond it they all start afresh
// (every site gets a full bucket), which errs on the side of serving.
const maxBuckets = 100000

// NewBudgets returns the budgets of the limit called name (a rate) under
// cfg.
func NewBudgets(cfg *Config, name Name) *Budgets {
	l := mustLookup(name)
	if l.Per <= 0 {
		panic("limits: " + string(name) + " is not a rate")
	}
	return &Budgets{cfg: cfg, name: name, per: l.Per, sites: map[tenant.ID]*bucket{}}
}

// Take spends cost from the budget of the request's site, waiting up to
// MaxWait for it, and reports whether it could; if not (after MaxWait, or
// when ctx ends), nothing is spent and retry says when it could be. A
// cost above the whole budget is taken as the whole budget. A request
// without a site is not counted.
func (b *Budgets) Take(ctx context.Context, cost int) (ok bool, retry time.Duration) {
	site, found := tenant.FromContext(ctx)
	if !found {
		return true, 0
	}
	value := b.cfg.ForSite(site, b.name)
	cost = max(1, min(cost, value))
	b.mu.Lock()
	bk := b.sites[site.ID]
	if bk == nil || bk.value != value {
		if len(b.sites) >= maxBuckets {
			clear(b.sites)
		}
		bk = &bucket{value: value, lim: rate.NewLimiter(rate.Limit(float64(value)/b.per.Seconds()), value)}
		b.sites[site.ID] = bk
	}
	b.mu.Unlock()
	now := time.Now()
	r := bk.lim.ReserveN(now, cost)
	d := r.DelayFrom(now)
	if d == 0 {
		return true, 0
	}
	wait := d
	if d > MaxWait {
		r.CancelAt(now)
		wait = MaxWait
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		if d <= MaxWait {
			r.Cancel()
		}
		return false, d
	}
	if d <= MaxWait {
		return true, 0
	}
	return false, d - MaxWait
}
