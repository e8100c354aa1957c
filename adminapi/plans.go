package adminapi

import (
	"context"

	"github.com/lectern/lectern/storage"
)

const kindPlan kind = "membership_plan"

func toPlan(p *storage.MembershipPlan) MembershipPlan {
	return MembershipPlan{Id: p.ID, Slug: p.Slug, Title: p.Title, Description: p.Description, PriceCents: p.PriceCents,
		Currency: p.Currency, Interval: PlanInterval(p.Interval), Status: PublicationStatus(p.Status), CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt}
}

func validatePlan(p *storage.MembershipPlan) error {
	var f fields
	f.slug("slug", p.Slug)
	f.text("title", p.Title, 1, 300, false)
	f.text("description", p.Description, 0, 20000, true)
	f.nonNegative("priceCents", p.PriceCents)
	f.currency("currency", p.Currency)
	if !PlanInterval(p.Interval).Valid() {
		f.add("interval", "must be month or year")
	}
	f.status("status", p.Status)
	return f.err()
}

// ListMembershipPlans implements GET /membership-plans
// (membership_plans:read).
func (h *Handler) ListMembershipPlans(ctx context.Context, req ListMembershipPlansRequestObject) (ListMembershipPlansResponseObject, error) {
	p, err := keysetPage(ctx, h.store.MembershipPlanRecords(), req.Params.Cursor, req.Params.Limit, toPlan)
	if err != nil {
		return nil, err
	}
	return ListMembershipPlans200JSONResponse{Items: p.items, NextCursor: p.next, TotalCount: p.total}, nil
}

// CreateMembershipPlan implements POST /membership-plans
// (membership_plans:write).
func (h *Handler) CreateMembershipPlan(ctx context.Context, req CreateMembershipPlanRequestObject) (CreateMembershipPlanResponseObject, error) {
	b := req.Body
	p := &storage.MembershipPlan{Slug: b.Slug, Title: b.Title, Description: orDefault(b.Description, ""), PriceCents: orDefault(b.PriceCents, 0),
		Currency: orDefault(b.Currency, "USD"), Interval: string(b.Interval), Status: string(orDefault(b.Status, PublicationStatusDraft))}
	if err := createRecord(ctx, h, h.store.MembershipPlanRecords(), kindPlan, p, validatePlan, "slug"); err != nil {
		return nil, err
	}
	return CreateMembershipPlan201JSONResponse(toPlan(p)), nil
}

// GetMembershipPlan implements GET /membership-plans/{planId}
// (membership_plans:read).
func (h *Handler) GetMembershipPlan(ctx context.Context, req GetMembershipPlanRequestObject) (GetMembershipPlanResponseObject, error) {
	p, err := getRecord(ctx, h.store.MembershipPlanRecords(), kindPlan, req.PlanId)
	if err != nil {
		return nil, err
	}
	return GetMembershipPlan200JSONResponse(toPlan(p)), nil
}

// UpdateMembershipPlan implements PATCH /membership-plans/{planId}
// (membership_plans:write).
func (h *Handler) UpdateMembershipPlan(ctx context.Context, req UpdateMembershipPlanRequestObject) (UpdateMembershipPlanResponseObject, error) {
	b := req.Body
	p, err := updateRecord(ctx, h, h.store.MembershipPlanRecords(), kindPlan, req.PlanId, func(p *storage.MembershipPlan) error {
		set(&p.Slug, b.Slug)
		set(&p.Title, b.Title)
		set(&p.Description, b.Description)
		set(&p.PriceCents, b.PriceCents)
		set(&p.Currency, b.Currency)
		if b.Interval != nil {
			p.Interval = string(*b.Interval)
		}
		if b.Status != nil {
			p.Status = string(*b.Status)
		}
		return nil
	}, validatePlan, "slug")
	if err != nil {
		return nil, err
	}
	return UpdateMembershipPlan200JSONResponse(toPlan(p)), nil
}

// DeleteMembershipPlan implements DELETE /membership-plans/{planId}
// (membership_plans:write): a plan with subscriptions stays.
func (h *Handler) DeleteMembershipPlan(ctx context.Context, req DeleteMembershipPlanRequestObject) (DeleteMembershipPlanResponseObject, error) {
	err := deleteRecord(ctx, h, h.store.MembershipPlanRecords(), kindPlan, req.PlanId, func(p *storage.MembershipPlan) error {
		return refuseIfAny(ctx, h.store.SubscriptionRecords(), "members subscribe to this plan; unpublish it instead",
			storage.Match{Field: "PlanID", Value: p.ID})
	})
	if err != nil {
		return nil, err
	}
	return DeleteMembershipPlan204Response{}, nil
}
