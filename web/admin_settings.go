package web

import (
	"errors"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/lectern/lectern/internal/brand"
	"github.com/lectern/lectern/internal/platform"
	"github.com/lectern/lectern/storage"
)

type settingsData struct {
	chrome
	BetaOn   bool
	Accounts storage.AccountSettings
	// MailFrom is what the site's mail shows as sender now.
	MailFrom string
	// Errors say why the accounts form was refused.
	Errors accountErrors
	Limits []limitRow
	// LimitsError says why the limits were not saved.
	LimitsError string
	// Colors are the appearance form's fields; AppearanceError says why
	// it was refused (a colour pair too close to read).
	Colors          []colorField
	AppearanceError string
}

// colorField is a colour of the appearance form.
type colorField struct {
	// Field is the form's (and the admin API's) name: primaryColor ...
	Field, Value string
	// Label and Hint are message IDs.
	Label, Hint string
	Invalid     bool
}

// colorFields are the appearance form's fields with a's colours; those
// named in bad are marked invalid.
func colorFields(a *storage.Appearance, bad ...string) []colorField {
	out := []colorField{
		{Field: "primaryColor", Value: a.PrimaryColor},
		{Field: "accentColor", Value: a.AccentColor},
		{Field: "backgroundColor", Value: a.BackgroundColor},
		{Field: "textColor", Value: a.TextColor},
	}
	for i := range out {
		f := &out[i]
		f.Label, f.Hint = "web.appearance."+f.Field, "web.appearance."+f.Field+"_hint"
		f.Invalid = slices.Contains(bad, f.Field)
	}
	return out
}

// settings serves GET /admin/settings: the beta features and the site's
// limits (owners and admins).
func (h *Handler) settings(w http.ResponseWriter, r *http.Request, rq *request) {
	d := h.settingsPage(rq)
	a, err := h.store.Appearance(r.Context(), rq.site.ID)
	if errors.Is(err, storage.ErrNotFound) {
		a, err = storage.DefaultAppearance(rq.site.ID), nil
	}
	if err != nil {
		h.fail(w, r, rq, err)
		return
	}
	d.Colors = colorFields(a)
	h.render(w, r, rq, http.StatusOK, "admin_settings", "Settings", d, h.takeFlash(r.Context(), rq))
}

var colorRE = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)

// appearanceSave serves POST /admin/settings/appearance: the site's
// colours, as PUT /api/v1/appearance sets them and with the same check
// (brand.Check): a pair too close to read is refused with 422 and the
// pair and its ratio. The logo stays as it is (it is an upload: the admin
// API sets it).
func (h *Handler) appearanceSave(w http.ResponseWriter, r *http.Request, rq *request) {
	ctx := r.Context()
	old, err := h.store.Appearance(ctx, rq.site.ID)
	if errors.Is(err, storage.ErrNotFound) {
		old, err = storage.DefaultAppearance(rq.site.ID), nil
	}
	if err != nil {
		h.fail(w, r, rq, err)
		return
	}
	a := &storage.Appearance{SiteID: rq.site.ID, LogoFileID: old.LogoFileID,
		PrimaryColor: strings.ToLower(r.PostFormValue("primaryColor")), AccentColor: strings.ToLower(r.PostFormValue("accentColor")),
		BackgroundColor: strings.ToLower(r.PostFormValue("backgroundColor")), TextColor: strings.ToLower(r.PostFormValue("textColor"))}
	refuse := func(msg string, bad ...string) {
		d := h.settingsPage(rq)
		d.Colors, d.AppearanceError = colorFields(a, bad...), msg
		h.render(w, r, rq, http.StatusUnprocessableEntity, "admin_settings", "Settings", d, nil)
	}
	for _, f := range colorFields(a) {
		if !colorRE.MatchString(f.Value) {
			refuse(h.t(r, rq, "web.appearance.not_a_colour", "Field", h.t(r, rq, f.Label)), f.Field)
			return
		}
	}
	if e := brand.Check(brand.Colors{Primary: a.PrimaryColor, Accent: a.AccentColor, Background: a.BackgroundColor, Text: a.TextColor}); e != nil {
		refuse(h.t(r, rq, "web.appearance.contrast",
			"Foreground", h.t(r, rq, "web.appearance."+e.Pair.Foreground), "Background", h.t(r, rq, "web.appearance."+e.Pair.Background),
			"Ratio", brand.FormatRatio(e.Ratio), "Required", brand.FormatRatio(brand.MinContrast)), e.Pair.Foreground, e.Pair.Background)
		return
	}
	if err := h.store.SaveAppearance(ctx, a); err != nil {
		h.fail(w, r, rq, err)
		return
	}
	h.brand.Forget(rq.site.ID)
	h.audit(r, rq, "appearance.updated", "site", map[string]any{"primary": a.PrimaryColor, "accent": a.AccentColor, "background": a.BackgroundColor, "text": a.TextColor})
	_ = h.setFlash(ctx, rq, flash{Kind: "ok", Message: "Appearance saved. Every page of the site shows it now."})
	seeOther(w, r, "/admin/settings")
}

// settingsPage is the Settings page as stored; a form refused shows what
// was typed in its own section.
func (h *Handler) settingsPage(rq *request) settingsData {
	from := h.platform.SenderOf(rq.stored)
	return settingsData{chrome: chromeFor(rq, "admin", "settings"), BetaOn: rq.developersOn(), Accounts: rq.stored.Accounts(),
		MailFrom: from.Name + " <" + from.Address + ">", Limits: h.limitRows(rq, nil, nil)}
}

// accountErrors say why the accounts form was refused, next to the field.
type accountErrors struct {
	Name, Address string
}

func (h *Handler) renderSettings(w http.ResponseWriter, r *http.Request, rq *request, status int, a storage.AccountSettings, errs accountErrors, f *flash) {
	d := h.settingsPage(rq)
	if app, err := h.store.Appearance(r.Context(), rq.site.ID); err == nil {
		d.Colors = colorFields(app)
	} else {
		d.Colors = colorFields(storage.DefaultAppearance(rq.site.ID))
	}
	d.Accounts, d.Errors = a, errs
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
	switch err := platform.CheckMailFromName(a.MailFromName); {
	case errors.Is(err, platform.ErrSenderName):
		h.renderSettings(w, r, rq, http.StatusUnprocessableEntity, a, accountErrors{Name: "Mail cannot carry this sender name. With letters outside ASCII, leave out the backslash (\\)."}, nil)
		return
	case err != nil:
		h.renderSettings(w, r, rq, http.StatusUnprocessableEntity, a, accountErrors{Name: "The sender name must be one line of at most 200 characters."}, nil)
		return
	}
	if a.MailFromAddress != "" {
		addr, err := platform.NormalizeEmail(a.MailFromAddress)
		if err != nil {
			h.renderSettings(w, r, rq, http.StatusUnprocessableEntity, a, accountErrors{Address: "The sender address must be an e-mail address, or empty."}, nil)
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
