package adminapi

import (
	"context"

	"github.com/lectern/lectern/storage"
)

const kindProduct kind = "digital_product"

func toProduct(p *storage.DigitalProduct) DigitalProduct {
	return DigitalProduct{Id: p.ID, Slug: p.Slug, Title: p.Title, Description: p.Description, PriceCents: p.PriceCents,
		Currency: p.Currency, Status: PublicationStatus(p.Status), CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt}
}

func validateProduct(p *storage.DigitalProduct) error {
	var f fields
	f.slug("slug", p.Slug)
	f.text("title", p.Title, 1, 300, false)
	f.text("description", p.Description, 0, 20000, true)
	f.nonNegative("priceCents", p.PriceCents)
	f.currency("currency", p.Currency)
	f.status("status", p.Status)
	return f.err()
}

// ListDigitalProducts implements GET /digital-products
// (digital_products:read).
func (h *Handler) ListDigitalProducts(ctx context.Context, req ListDigitalProductsRequestObject) (ListDigitalProductsResponseObject, error) {
	p, err := keysetPage(ctx, h.store.DigitalProductRecords(), req.Params.Cursor, req.Params.Limit, toProduct)
	if err != nil {
		return nil, err
	}
	return ListDigitalProducts200JSONResponse{Items: p.items, NextCursor: p.next, TotalCount: p.total}, nil
}

// CreateDigitalProduct implements POST /digital-products
// (digital_products:write).
func (h *Handler) CreateDigitalProduct(ctx context.Context, req CreateDigitalProductRequestObject) (CreateDigitalProductResponseObject, error) {
	b := req.Body
	p := &storage.DigitalProduct{Slug: b.Slug, Title: b.Title, Description: orDefault(b.Description, ""), PriceCents: orDefault(b.PriceCents, 0),
		Currency: orDefault(b.Currency, "USD"), Status: string(orDefault(b.Status, PublicationStatusDraft))}
	if err := createRecord(ctx, h, h.store.DigitalProductRecords(), kindProduct, p, validateProduct, "slug"); err != nil {
		return nil, err
	}
	return CreateDigitalProduct201JSONResponse(toProduct(p)), nil
}

// GetDigitalProduct implements GET /digital-products/{productId}
// (digital_products:read).
func (h *Handler) GetDigitalProduct(ctx context.Context, req GetDigitalProductRequestObject) (GetDigitalProductResponseObject, error) {
	p, err := getRecord(ctx, h.store.DigitalProductRecords(), kindProduct, req.ProductId)
	if err != nil {
		return nil, err
	}
	return GetDigitalProduct200JSONResponse(toProduct(p)), nil
}

// UpdateDigitalProduct implements PATCH /digital-products/{productId}
// (digital_products:write).
func (h *Handler) UpdateDigitalProduct(ctx context.Context, req UpdateDigitalProductRequestObject) (UpdateDigitalProductResponseObject, error) {
	b := req.Body
	p, err := updateRecord(ctx, h, h.store.DigitalProductRecords(), kindProduct, req.ProductId, func(p *storage.DigitalProduct) error {
		set(&p.Slug, b.Slug)
		set(&p.Title, b.Title)
		set(&p.Description, b.Description)
		set(&p.PriceCents, b.PriceCents)
		set(&p.Currency, b.Currency)
		if b.Status != nil {
			p.Status = string(*b.Status)
		}
		return nil
	}, validateProduct, "slug")
	if err != nil {
		return nil, err
	}
	return UpdateDigitalProduct200JSONResponse(toProduct(p)), nil
}

// DeleteDigitalProduct implements DELETE /digital-products/{productId}
// (digital_products:write): a product someone bought stays, so their
// purchase does too.
func (h *Handler) DeleteDigitalProduct(ctx context.Context, req DeleteDigitalProductRequestObject) (DeleteDigitalProductResponseObject, error) {
	err := deleteRecord(ctx, h, h.store.DigitalProductRecords(), kindProduct, req.ProductId, func(p *storage.DigitalProduct) error {
		return refuseIfAny(ctx, h.store.DigitalProductPurchaseRecords(), "people bought this product; unpublish it instead",
			storage.Match{Field: "ProductID", Value: p.ID})
	})
	if err != nil {
		return nil, err
	}
	return DeleteDigitalProduct204Response{}, nil
}
