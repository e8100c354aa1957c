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
	f.offer(p.Slug, p.Title, p.Description, p.PriceCents, p.Currency)
	if !PlanInterval(p.Interval).Valid() {
		f.add("interval", "must be month or year")
	}
	f.status("status", p.Status)
	return f.err()
}

var plans = resource[storage.MembershipPlan, MembershipPlan]{kind: kindPlan, records: Store.MembershipPlanRecords,
	view: toPlan, validate: validatePlan, unique: "slug",
	inUse: refuseIfUsed[storage.MembershipPlan](Store.SubscriptionRecords, "PlanID", "members subscribe to this plan; unpublish it instead")}

// ListMembershipPlans implements GET /membership-plans
// (membership_plans:read).
func (h *Handler) ListMembershipPlans(ctx context.Context, req ListMembershipPlansRequestObject) (ListMembershipPlansResponseObject, error) {
	return list[ListMembershipPlans200JSONResponse](ctx, h, plans, req.Params.Cursor, req.Params.Limit)
}

// CreateMembershipPlan implements POST /membership-plans
// (membership_plans:write).
func (h *Handler) CreateMembershipPlan(ctx context.Context, req CreateMembershipPlanRequestObject) (CreateMembershipPlanResponseObject, error) {
	b := req.Body
	p, err := plans.create(ctx, h, &storage.MembershipPlan{Slug: b.Slug, Title: b.Title, Description: orDefault(b.Description, ""),
		PriceCents: orDefault(b.PriceCents, 0), Currency: orDefault(b.Currency, "USD"), Interval: string(b.Interval),
		Status: string(orDefault(b.Status, PublicationStatusDraft))})
	return CreateMembershipPlan201JSONResponse(p), err
}

// GetMembershipPlan implements GET /membership-plans/{planId}
// (membership_plans:read).
func (h *Handler) GetMembershipPlan(ctx context.Context, req GetMembershipPlanRequestObject) (GetMembershipPlanResponseObject, error) {
	p, err := plans.get(ctx, h, req.PlanId)
	return GetMembershipPlan200JSONResponse(p), err
}

// UpdateMembershipPlan implements PATCH /membership-plans/{planId}
// (membership_plans:write).
func (h *Handler) UpdateMembershipPlan(ctx context.Context, req UpdateMembershipPlanRequestObject) (UpdateMembershipPlanResponseObject, error) {
	b := req.Body
	p, err := plans.change(ctx, h, req.PlanId, func(p *storage.MembershipPlan) {
		set(&p.Slug, b.Slug)
		set(&p.Title, b.Title)
		set(&p.Description, b.Description)
		set(&p.PriceCents, b.PriceCents)
		set(&p.Currency, b.Currency)
		setAs(&p.Interval, b.Interval)
		setAs(&p.Status, b.Status)
	})
	return UpdateMembershipPlan200JSONResponse(p), err
}

// DeleteMembershipPlan implements DELETE /membership-plans/{planId}
// (membership_plans:write): a plan with subscriptions stays.
func (h *Handler) DeleteMembershipPlan(ctx context.Context, req DeleteMembershipPlanRequestObject) (DeleteMembershipPlanResponseObject, error) {
	_, err := plans.delete(ctx, h, req.PlanId)
	return DeleteMembershipPlan204Response{}, err
}
