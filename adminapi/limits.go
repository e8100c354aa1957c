package adminapi

import (
	"context"
	"maps"

	"github.com/lectern/lectern/storage"
)

// toSiteLimits is what GET /limits answers for s: every limit, read from
// the stored site (so a change shows at once, before every replica has
// it).
func (h *Handler) toSiteLimits(s *storage.Site) SiteLimits {
	views := h.limits.Views(s.Tenant())
	out := SiteLimits{Limits: make([]SiteLimit, 0, len(views))}
	for _, v := range views {
		l := SiteLimit{
			Name: LimitName(v.Name), Title: v.Title, Unit: v.Unit, PeriodSeconds: int(v.Per.Seconds()),
			Default: v.Default, Max: v.Ceiling, Value: v.Value, SetByProvider: v.Provider > 0,
		}
		if v.Override > 0 {
			l.Override = ptr(v.Override)
		}
		out.Limits = append(out.Limits, l)
	}
	return out
}

// GetLimits implements GET /limits (school:read).
func (h *Handler) GetLimits(ctx context.Context, _ GetLimitsRequestObject) (GetLimitsResponseObject, error) {
	s, err := h.store.SiteByID(ctx, siteOf(ctx))
	if err != nil {
		return nil, err
	}
	return GetLimits200JSONResponse(h.toSiteLimits(s)), nil
}

// UpdateLimits implements PUT /limits (school:write): the operators'
// complete set of values, each up to the platform's ceiling
// (limits.Config.CheckOperatorSet); the change reaches every replica
// through platform.UpdateSite.
func (h *Handler) UpdateLimits(ctx context.Context, req UpdateLimitsRequestObject) (UpdateLimitsResponseObject, error) {
	s, err := h.store.SiteByID(ctx, siteOf(ctx))
	if err != nil {
		return nil, err
	}
	next := req.Body.Overrides
	if next == nil {
		return nil, invalidField("overrides", "is required (an empty object sets every limit back to the platform default)")
	}
	var f fields
	for _, e := range h.limits.CheckOperatorSet(s.Tenant(), next) {
		field := "overrides"
		if e.Name != "" {
			field += "." + e.Name
		}
		f.add(field, "%s", e.Reason)
	}
	if err := f.err(); err != nil {
		return nil, err
	}
	before := s.OperatorLimits()
	s.SetOperatorLimits(next)
	if err := h.platform.UpdateSite(ctx, s); err != nil {
		return nil, err
	}
	if !maps.Equal(before, s.OperatorLimits()) {
		details := map[string]any{}
		for k, v := range next {
			details[k] = v
		}
		h.audit(ctx, "limits.updated", "site", map[string]any{"overrides": details})
	}
	return UpdateLimits200JSONResponse(h.toSiteLimits(s)), nil
}
