package web

import (
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
	Applications string
	Connections  string
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
			grants, err := h.liveGrants(r, rq, "")
			if err != nil {
				h.fail(w, r, rq, err)
				return
			}
			d.Applications = count(len(apps), "application")
			d.Connections = count(len(grants), "connection")
		}
		events, err := h.store.ListAudit(ctx, rq.site.ID, 0, 5)
		if err != nil {
			h.fail(w, r, rq, err)
			return
		}
		d.Recent = h.auditRows(r, events)
	}
	h.render(w, r, rq, http.StatusOK, "admin_dashboard", "Dashboard", d, h.takeFlash(ctx, rq))
}

// liveGrants returns the site's grants that still work (not revoked, not
// past their absolute limit), of one user when userID != "", newest first.
func (h *Handler) liveGrants(r *http.Request, rq *request, userID string) ([]storage.Grant, error) {
	all, err := h.store.ListGrants(r.Context(), rq.site.ID, userID, false)
	if err != nil {
		return nil, err
	}
	now := h.now()
	out := all[:0]
	for _, g := range all {
		if g.RevokedAt == nil && (g.ExpiresAt.IsZero() || g.ExpiresAt.After(now)) {
			out = append(out, g)
		}
	}
	return out, nil
}

// grantLastUsed is when a grant was last used: its refresh time, or its
// creation when it was never refreshed.
func grantLastUsed(g storage.Grant) time.Time {
	if g.LastUsedAt.After(g.CreatedAt) {
		return g.LastUsedAt
	}
	return g.CreatedAt
}
