package web

import (
	"maps"
	"net/http"
	"strings"

	"github.com/lectern/lectern/internal/platform"
	"github.com/lectern/lectern/storage"
)

type settingsData struct {
	chrome
	BetaOn   bool
	Accounts storage.AccountSettings
	// MailFrom is what the site's mail shows as sender now.
	MailFrom string
	Error    string
	Limits   []limitRow
	// LimitsError says why the limits were not saved.
	LimitsError string
}

// settings serves GET /admin/settings: the beta features and the site's
// limits (owners and admins).
func (h *Handler) settings(w http.ResponseWriter, r *http.Request, rq *request) {
	h.render(w, r, rq, http.StatusOK, "admin_settings", "Settings", h.settingsPage(rq), h.takeFlash(r.Context(), rq))
}

// settingsPage is the Settings page as stored; a form refused shows what
// was typed in its own section.
func (h *Handler) settingsPage(rq *request) settingsData {
	from := h.platform.SenderOf(rq.stored)
	return settingsData{chrome: chromeFor(rq, "admin", "settings"), BetaOn: rq.developersOn(), Accounts: rq.stored.Accounts(),
		MailFrom: from.Name + " <" + from.Address + ">", Limits: h.limitRows(rq, nil, nil)}
}

func (h *Handler) renderSettings(w http.ResponseWriter, r *http.Request, rq *request, status int, a storage.AccountSettings, errMsg string, f *flash) {
	d := h.settingsPage(rq)
	d.Accounts, d.Error = a, errMsg
	h.render(w, r, rq, status, "admin_settings", "Settings", d, f)
}

// accountSettings serves POST /admin/settings/accounts: whether people may
// sign up, and the sender of the site's mail.
func (h *Handler) accountSettings(w http.ResponseWriter, r *http.Request, rq *request) {
	a := storage.AccountSettings{
		SignUp:          r.PostFormValue("signup") == "on",
		StaffMFA:        r.PostFormValue("staff_mfa") == "on",
		MailFromName:    strings.TrimSpace(r.PostFormValue("mail_from_name")),
		MailFromAddress: strings.TrimSpace(r.PostFormValue("mail_from_address")),
	}
	if len(a.MailFromName) > 200 || strings.ContainsAny(a.MailFromName, "\r\n") {
		h.renderSettings(w, r, rq, http.StatusUnprocessableEntity, a, "The sender name must be one line of at most 200 characters.", nil)
		return
	}
	if a.MailFromAddress != "" {
		addr, err := platform.NormalizeEmail(a.MailFromAddress)
		if err != nil {
			h.renderSettings(w, r, rq, http.StatusUnprocessableEntity, a, "The sender address must be an e-mail address, or empty.", nil)
			return
		}
		a.MailFromAddress = addr
	}
	site := *rq.stored
	site.Settings = maps.Clone(site.Settings)
	site.SetAccounts(a)
	if err := h.platform.UpdateSite(r.Context(), &site); err != nil {
		h.fail(w, r, rq, err)
		return
	}
	h.audit(r, rq, "site.accounts_changed", "site", map[string]any{"sign_up": a.SignUp, "staff_second_factor": a.StaffMFA, "mail_from_name": a.MailFromName, "mail_from_address": a.MailFromAddress})
	_ = h.setFlash(r.Context(), rq, flash{Kind: "ok", Message: "Account settings saved."})
	seeOther(w, r, "/admin/settings")
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
