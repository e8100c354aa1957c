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
	f.offer(p.Slug, p.Title, p.Description, p.PriceCents, p.Currency)
	f.status("status", p.Status)
	return f.err()
}

var products = resource[storage.DigitalProduct, DigitalProduct]{kind: kindProduct, records: Store.DigitalProductRecords,
	view: toProduct, validate: validateProduct, unique: "slug",
	inUse: refuseIfUsed[storage.DigitalProduct](Store.DigitalProductPurchaseRecords, "ProductID", "people bought this product; unpublish it instead")}

// ListDigitalProducts implements GET /digital-products
// (digital_products:read).
func (h *Handler) ListDigitalProducts(ctx context.Context, req ListDigitalProductsRequestObject) (ListDigitalProductsResponseObject, error) {
	return list[ListDigitalProducts200JSONResponse](ctx, h, products, req.Params.Cursor, req.Params.Limit)
}

// CreateDigitalProduct implements POST /digital-products
// (digital_products:write).
func (h *Handler) CreateDigitalProduct(ctx context.Context, req CreateDigitalProductRequestObject) (CreateDigitalProductResponseObject, error) {
	b := req.Body
	p, err := products.create(ctx, h, &storage.DigitalProduct{Slug: b.Slug, Title: b.Title, Description: orDefault(b.Description, ""),
		PriceCents: orDefault(b.PriceCents, 0), Currency: orDefault(b.Currency, "USD"), Status: string(orDefault(b.Status, PublicationStatusDraft))})
	return CreateDigitalProduct201JSONResponse(p), err
}

// GetDigitalProduct implements GET /digital-products/{productId}
// (digital_products:read).
func (h *Handler) GetDigitalProduct(ctx context.Context, req GetDigitalProductRequestObject) (GetDigitalProductResponseObject, error) {
	p, err := products.get(ctx, h, req.ProductId)
	return GetDigitalProduct200JSONResponse(p), err
}

// UpdateDigitalProduct implements PATCH /digital-products/{productId}
// (digital_products:write).
func (h *Handler) UpdateDigitalProduct(ctx context.Context, req UpdateDigitalProductRequestObject) (UpdateDigitalProductResponseObject, error) {
	b := req.Body
	p, err := products.change(ctx, h, req.ProductId, func(p *storage.DigitalProduct) {
		set(&p.Slug, b.Slug)
		set(&p.Title, b.Title)
		set(&p.Description, b.Description)
		set(&p.PriceCents, b.PriceCents)
		set(&p.Currency, b.Currency)
		setAs(&p.Status, b.Status)
	})
	return UpdateDigitalProduct200JSONResponse(p), err
}

// DeleteDigitalProduct implements DELETE /digital-products/{productId}
// (digital_products:write): a product someone bought stays, so their
// purchase does too.
func (h *Handler) DeleteDigitalProduct(ctx context.Context, req DeleteDigitalProductRequestObject) (DeleteDigitalProductResponseObject, error) {
	_, err := products.delete(ctx, h, req.ProductId)
	return DeleteDigitalProduct204Response{}, err
}
