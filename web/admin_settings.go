package web

import (
	"net/http"
)

type settingsData struct {
	chrome
	BetaOn bool
	Limits []limitRow
	// LimitsError says why the limits were not saved.
	LimitsError string
}

// settings serves GET /admin/settings: the beta features and the site's
// limits (owners and admins).
func (h *Handler) settings(w http.ResponseWriter, r *http.Request, rq *request) {
	d := settingsData{chrome: chromeFor(rq, "admin", "settings"), BetaOn: rq.developersOn(), Limits: h.limitRows(rq, nil, nil)}
	h.render(w, r, rq, http.StatusOK, "admin_settings", "Settings", d, h.takeFlash(r.Context(), rq))
}

// betaToggle serves POST /admin/settings/beta: it turns "MCP connections"
// on (enabled=on) or off (enabled=off). Turning it off hides Developers;
// applications and connections made meanwhile keep working.
func (h *Handler) betaToggle(w http.ResponseWriter, r *http.Request, rq *request) {
	var on bool
	switch r.PostFormValue("enabled") {
	case "on":
		on = true
	case "off":
	default:
		h.problem(w, r, rq, http.StatusBadRequest, "Settings not changed", "The form did not say whether to turn the feature on or off.", "Go back and use the button.")
		return
	}
	site := *rq.stored
	if site.MCPConnectionsBeta != on {
		site.MCPConnectionsBeta = on
		if err := h.platform.UpdateSite(r.Context(), &site); err != nil {
			h.fail(w, r, rq, err)
			return
		}
		h.audit(r, rq, "site.beta_changed", "mcp_connections", map[string]any{"feature": "mcp_connections", "enabled": on})
	}
	msg := "MCP connections is off. Developers is hidden; applications you created keep working."
	if on {
		msg = "MCP connections is on. Developers → OAuth applications is now in the menu."
	}
	_ = h.setFlash(r.Context(), rq, flash{Kind: "ok", Message: msg})
	seeOther(w, r, "/admin/settings")
}
