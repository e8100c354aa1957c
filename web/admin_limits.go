package web

import (
	"maps"
	"net/http"
	"strconv"
	"strings"

	"github.com/lectern/lectern/limits"
)

// limitRow is one limit on the Settings page.
type limitRow struct {
	Name, Title, Unit string
	Default, Max      int
	Value             int
	// Input is what the field holds: the operators' value, or what was
	// typed when the form came back with an error; empty for the default.
	Input string
	// Provider: the hosting provider set it; the field is read-only.
	Provider bool
	Error    string
}

func (h *Handler) limitRows(rq *request, typed map[string]string, errs map[string]string) []limitRow {
	site := rq.site
	if rq.stored != nil {
		site = rq.stored.Tenant()
	}
	views := h.limits.Views(site)
	rows := make([]limitRow, 0, len(views))
	for _, v := range views {
		row := limitRow{Name: string(v.Name), Title: v.Title, Unit: v.Unit, Default: v.Default, Max: v.Ceiling, Value: v.Value,
			Provider: v.Provider > 0, Error: errs[string(v.Name)]}
		if t, ok := typed[row.Name]; ok {
			row.Input = t
		} else if v.Override > 0 {
			row.Input = strconv.Itoa(v.Override)
		}
		rows = append(rows, row)
	}
	return rows
}

// limitsSave serves POST /admin/settings/limits: the operators' values of
// the site's limits, one field per limit (limit_<name>; empty: the
// platform default), each up to the platform's ceiling. Limits the
// hosting provider set are not part of the form and stay as they are.
func (h *Handler) limitsSave(w http.ResponseWriter, r *http.Request, rq *request) {
	site := rq.stored.Tenant()
	next, typed, errs := map[string]int{}, map[string]string{}, map[string]string{}
	for _, l := range limits.All {
		name := string(l.Name)
		if site.ProviderLimits[name] > 0 {
			if v := site.OperatorLimits[name]; v > 0 {
				next[name] = v // kept, though the provider's value is in force
			}
			continue
		}
		raw := strings.TrimSpace(r.PostFormValue("limit_" + name))
		typed[name] = raw
		if raw == "" {
			continue
		}
		n, err := strconv.Atoi(raw)
		if err != nil {
			errs[name] = "Enter a whole number, or leave it empty for the platform default."
			continue
		}
		next[name] = n
	}
	for _, e := range h.limits.CheckOperatorSet(site, next) {
		if errs[e.Name] == "" {
			errs[e.Name] = h.limitError(r, rq, e.Name)
		}
	}
	if len(errs) > 0 {
		d := h.settingsPage(rq)
		d.Limits, d.LimitsError = h.limitRows(rq, typed, errs), "The limits were not saved: correct the values marked below."
		h.render(w, r, rq, http.StatusUnprocessableEntity, "admin_settings", "Settings", d, nil)
		return
	}
	stored := *rq.stored
	before := stored.OperatorLimits()
	stored.Settings = maps.Clone(stored.Settings)
	stored.SetOperatorLimits(next)
	if !maps.Equal(before, stored.OperatorLimits()) {
		if err := h.platform.UpdateSite(r.Context(), &stored); err != nil {
			h.fail(w, r, rq, err)
			return
		}
		details := map[string]any{}
		for k, v := range next {
			details[k] = v
		}
		h.audit(r, rq, "limits.updated", "site", map[string]any{"overrides": details})
	}
	_ = h.setFlash(r.Context(), rq, flash{Kind: "ok", Message: "Limits saved. Every server applies them within seconds."})
	seeOther(w, r, "/admin/settings")
}

// limitError says, in the page's language, why a value of limit name was
// refused: it is outside 1 to the limit's ceiling.
func (h *Handler) limitError(r *http.Request, rq *request, name string) string {
	l, ok := limits.Lookup(name)
	if !ok {
		return h.t(r, rq, "web.limits.err_unknown")
	}
	if l.TightenOnly {
		return h.t(r, rq, "web.limits.err_tighten", "Max", h.limits.Ceiling(l.Name))
	}
	return h.t(r, rq, "web.limits.err_ceiling", "Max", h.limits.Ceiling(l.Name))
}
