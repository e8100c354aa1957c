package adminapi

import (
	"context"
	"strings"

	"github.com/lectern/lectern/storage"
)

const kindCoupon kind = "coupon"

func toCoupon(c *storage.Coupon) Coupon {
	out := Coupon{Id: c.ID, Code: c.Code, Description: c.Description, Currency: c.Currency, MaxRedemptions: c.MaxRedemptions,
		Redemptions: c.Redemptions, ExpiresAt: c.ExpiresAt, Active: c.Active, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
	if c.PercentOff > 0 {
		out.PercentOff = ptr(c.PercentOff)
	}
	if c.AmountOffCents > 0 {
		out.AmountOffCents = ptr(c.AmountOffCents)
	}
	return out
}

func validateCoupon(c *storage.Coupon) error {
	var f fields
	if !codeRE.MatchString(c.Code) {
		f.add("code", "must be 3 to 64 letters, digits, '-' or '_'")
	}
	f.text("description", c.Description, 0, 1000, true)
	switch {
	case c.PercentOff != 0 && c.AmountOffCents != 0:
		f.add("percentOff", "give either percentOff or amountOffCents, not both")
	case c.PercentOff == 0 && c.AmountOffCents == 0:
		f.add("percentOff", "give percentOff (1-100) or amountOffCents")
	case c.PercentOff < 0 || c.PercentOff > 100:
		f.add("percentOff", "must be between 1 and 100")
	case c.AmountOffCents < 0:
		f.add("amountOffCents", "must be positive")
	}
	f.currency("currency", c.Currency)
	f.nonNegative("maxRedemptions", int64(c.MaxRedemptions))
	return f.err()
}

var coupons = resource[storage.Coupon, Coupon]{kind: kindCoupon, records: Store.CouponRecords,
	view: toCoupon, validate: validateCoupon, unique: "code"}

// ListCoupons implements GET /coupons (coupons:read).
func (h *Handler) ListCoupons(ctx context.Context, req ListCouponsRequestObject) (ListCouponsResponseObject, error) {
	return list[ListCoupons200JSONResponse](ctx, h, coupons, req.Params.Cursor, req.Params.Limit)
}

// CreateCoupon implements POST /coupons (coupons:write). Codes are stored
// upper-case, so "save10" and "SAVE10" are one code.
func (h *Handler) CreateCoupon(ctx context.Context, req CreateCouponRequestObject) (CreateCouponResponseObject, error) {
	b := req.Body
	if b.ExpiresAt != nil && !b.ExpiresAt.After(h.now()) {
		return nil, invalidField("expiresAt", "must be in the future")
	}
	// A discount given as 0 or less is named itself (the stored coupon
	// cannot tell 0 from left out).
	if b.AmountOffCents != nil && *b.AmountOffCents < 1 {
		return nil, invalidField("amountOffCents", "must be at least 1")
	}
	if b.PercentOff != nil && *b.PercentOff < 1 {
		return nil, invalidField("percentOff", "must be between 1 and 100")
	}
	c, err := coupons.create(ctx, h, &storage.Coupon{Code: strings.ToUpper(b.Code), Description: orDefault(b.Description, ""),
		PercentOff: orDefault(b.PercentOff, 0), AmountOffCents: orDefault(b.AmountOffCents, 0), Currency: orDefault(b.Currency, "USD"),
		MaxRedemptions: orDefault(b.MaxRedemptions, 0), ExpiresAt: b.ExpiresAt, Active: orDefault(b.Active, true)})
	return CreateCoupon201JSONResponse(c), err
}

// GetCoupon implements GET /coupons/{couponId} (coupons:read).
func (h *Handler) GetCoupon(ctx context.Context, req GetCouponRequestObject) (GetCouponResponseObject, error) {
	c, err := coupons.get(ctx, h, req.CouponId)
	return GetCoupon200JSONResponse(c), err
}

// UpdateCoupon implements PATCH /coupons/{couponId} (coupons:write). The
// code and the discount stay: orders name the code they used.
func (h *Handler) UpdateCoupon(ctx context.Context, req UpdateCouponRequestObject) (UpdateCouponResponseObject, error) {
	b := req.Body
	c, err := coupons.change(ctx, h, req.CouponId, func(c *storage.Coupon) {
		set(&c.Description, b.Description)
		set(&c.MaxRedemptions, b.MaxRedemptions)
		set(&c.Active, b.Active)
		if b.ExpiresAt != nil {
			c.ExpiresAt = b.ExpiresAt
		}
	})
	return UpdateCoupon200JSONResponse(c), err
}

// DeleteCoupon implements DELETE /coupons/{couponId} (coupons:write).
// Orders keep the code they used.
func (h *Handler) DeleteCoupon(ctx context.Context, req DeleteCouponRequestObject) (DeleteCouponResponseObject, error) {
	_, err := coupons.delete(ctx, h, req.CouponId)
	return DeleteCoupon204Response{}, err
}
