package web

import (
	"context"
	"net/http"
	"time"

	"github.com/lectern/lectern/storage"
)

type dashboardData struct {
	chrome
	Role    string
	Manager bool
	BetaOn  bool
	Origin  string
	// Applications and Connections are counted for managers while the
	// beta is on.
	Applications int
	Connections  int
	Recent       []auditRow
}

// dashboard serves GET /admin: what the site is, the person's role, and
// for owners and admins the state of the beta and the latest activity.
func (h *Handler) dashboard(w http.ResponseWriter, r *http.Request, rq *request) {
	ctx := r.Context()
	d := dashboardData{
		chrome: chromeFor(rq, "admin", "dashboard"), Role: roleLabel(rq.roles), Manager: rq.isManager(),
		BetaOn: rq.developersOn(), Origin: rq.site.Origin,
	}
	if d.Manager {
		if d.BetaOn {
			apps, err := h.platform.Applications(ctx, rq.site.ID)
			if err != nil {
				h.fail(w, r, rq, err)
				return
			}
			perClient, err := h.store.LiveGrantCounts(ctx, rq.site.ID, h.now())
			if err != nil {
				h.fail(w, r, rq, err)
				return
			}
			n := 0
			for _, c := range perClient {
				n += c
			}
			d.Applications = len(apps)
			d.Connections = n
		}
		events, err := h.store.ListAudit(ctx, rq.site.ID, 0, 5)
		if err != nil {
			h.fail(w, r, rq, err)
			return
		}
		d.Recent = h.auditRows(r, events)
	}
	h.render(w, r, rq, http.StatusOK, "admin_dashboard", "Admin dashboard", d, h.takeFlash(ctx, rq))
}

// clientGrantCount is how many grants of the client still work (not
// revoked, not past their absolute limit).
func (h *Handler) clientGrantCount(ctx context.Context, rq *request, clientID string) (int, error) {
	_, n, err := h.store.LiveGrants(ctx, rq.site.ID, storage.GrantQuery{At: h.now(), ClientID: clientID, Limit: 1})
	return n, err
}

// grantLastUsed is when a grant was last used: its refresh time, or its
// creation when it was never refreshed.
func grantLastUsed(g storage.Grant) time.Time {
	if g.LastUsedAt.After(g.CreatedAt) {
		return g.LastUsedAt
	}
	return g.CreatedAt
}
