package adminapi

import (
	"context"
	"errors"

	"github.com/lectern/lectern/storage"
)

func toOrder(o *storage.OrderView) Order {
	out := Order{Id: o.ID, Number: o.Number, UserId: o.UserID, CustomerEmail: o.CustomerEmail, TotalCents: o.TotalCents,
		Currency: o.Currency, CouponCode: o.CouponCode, Status: o.Status, RefundStatus: o.RefundStatus, CreatedAt: o.CreatedAt,
		Items: make([]OrderItem, 0, len(o.Items))}
	for _, it := range o.Items {
		out.Items = append(out.Items, OrderItem{Id: it.ID, Kind: it.Kind, ItemId: it.ItemID, Title: it.Title, PriceCents: it.PriceCents})
	}
	return out
}

// ListOrders implements GET /orders (orders:read), newest first.
func (h *Handler) ListOrders(ctx context.Context, req ListOrdersRequestObject) (ListOrdersResponseObject, error) {
	p, err := pageOf(req.Params.Cursor, req.Params.Limit)
	if err != nil {
		return nil, err
	}
	n := p.Limit
	p.Limit++
	rows, total, err := h.store.RecentOrders(ctx, siteOf(ctx), p)
	if err != nil {
		return nil, err
	}
	out := OrderList{Items: make([]Order, 0, min(n, len(rows))), TotalCount: total}
	for i := range rows {
		if i == n {
			out.NextCursor = encodeCursor(rows[i-1].ID)
			break
		}
		out.Items = append(out.Items, toOrder(&rows[i]))
	}
	return ListOrders200JSONResponse(out), nil
}

// GetOrder implements GET /orders/{orderId} (orders:read).
func (h *Handler) GetOrder(ctx context.Context, req GetOrderRequestObject) (GetOrderResponseObject, error) {
	o, err := h.store.OrderByID(ctx, siteOf(ctx), req.OrderId)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, errNotFound("no such order at this site")
	} else if err != nil {
		return nil, err
	}
	return GetOrder200JSONResponse(toOrder(o)), nil
}
