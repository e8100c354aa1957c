package mcp

import (
	"context"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/vocab"
)

// The operator tools, each behind its operator scope. They see what the
// site's operators see: drafts, students, orders with coupons and refunds.

func (t *tools) listCourses(ctx context.Context, _ *gomcp.CallToolRequest, in ListCoursesInput) (*gomcp.CallToolResult, ListCoursesOutput, error) {
	var out ListCoursesOutput
	site, _, err := t.person(ctx, "courses:read")
	if err != nil {
		return nil, out, err
	}
	after, err := decodeCursor(in.Cursor)
	if err != nil {
		return nil, out, err
	}
	limit := pageLimit(in.Limit)
	rows, total, err := t.store.ListCourses(ctx, site.ID, in.IncludeDrafts, page(after, limit))
	if err != nil {
		return nil, out, t.fail(ctx, "list_courses", err)
	}
	rows, out.NextCursor = trim(rows, limit, func(c storage.Course) int64 { return c.ID })
	out.Courses = make([]OperatorCourseOutput, len(rows))
	for i, c := range rows {
		out.Courses[i] = OperatorCourseOutput{
			ID: c.ID, Slug: c.Slug, Title: c.Title, Category: c.Category, Status: c.Status,
			PublishedAt: optTime(c.PublishedAt), UpdatedAt: rfc3339(c.UpdatedAt), Money: price(c.PriceCents, c.Currency),
		}
	}
	out.Total = total
	return nil, out, nil
}

func (t *tools) listStudents(ctx context.Context, _ *gomcp.CallToolRequest, in ListStudentsInput) (*gomcp.CallToolResult, ListStudentsOutput, error) {
	var out ListStudentsOutput
	site, _, err := t.person(ctx, "students:read")
	if err != nil {
		return nil, out, err
	}
	// Students are listed by e-mail, so the cursor is an offset.
	offset, err := decodeCursor(in.Cursor)
	if err != nil {
		return nil, out, err
	}
	limit := pageLimit(in.Limit)
	rows, total, err := t.store.ListStudents(ctx, site.ID, in.Search, page(offset, limit))
	if err != nil {
		return nil, out, t.fail(ctx, "list_students", err)
	}
	if len(rows) > limit {
		rows = rows[:limit]
		out.NextCursor = encodeCursor(offset + int64(limit))
	}
	out.Students = make([]StudentOutput, len(rows))
	for i, s := range rows {
		out.Students[i] = StudentOutput{UserID: s.UserID, Email: s.Email, Name: s.Name, Enrollments: s.Enrollments, Since: rfc3339(s.Since)}
	}
	out.Total = total
	return nil, out, nil
}

func (t *tools) recentOrders(ctx context.Context, _ *gomcp.CallToolRequest, in RecentOrdersInput) (*gomcp.CallToolResult, RecentOrdersOutput, error) {
	var out RecentOrdersOutput
	site, _, err := t.person(ctx, "orders:read")
	if err != nil {
		return nil, out, err
	}
	after, err := decodeCursor(in.Cursor)
	if err != nil {
		return nil, out, err
	}
	limit := pageLimit(in.Limit)
	rows, total, err := t.store.RecentOrders(ctx, site.ID, page(after, limit))
	if err != nil {
		return nil, out, t.fail(ctx, "recent_orders", err)
	}
	rows, out.NextCursor = trim(rows, limit, func(o storage.OrderView) int64 { return o.ID })
	out.Orders = make([]OrderOutput, len(rows))
	for i, o := range rows {
		items := make([]OrderItemOutput, len(o.Items))
		for j, it := range o.Items {
			items[j] = OrderItemOutput{Kind: it.Kind, Title: it.Title, Money: price(it.PriceCents, o.Currency)}
		}
		out.Orders[i] = OrderOutput{
			Number: o.Number, CustomerEmail: o.CustomerEmail, Status: o.Status, RefundStatus: o.RefundStatus,
			CouponCode: o.CouponCode, TotalCents: o.TotalCents, Currency: o.Currency,
			Total: vocab.Price(o.TotalCents, o.Currency), CreatedAt: rfc3339(o.CreatedAt), Items: items,
		}
	}
	out.Total = total
	return nil, out, nil
}

func (t *tools) salesSummary(ctx context.Context, _ *gomcp.CallToolRequest, in SalesSummaryInput) (*gomcp.CallToolResult, SalesSummaryOutput, error) {
	var out SalesSummaryOutput
	site, _, err := t.person(ctx, "analytics:read")
	if err != nil {
		return nil, out, err
	}
	days := in.Days
	if days <= 0 || days > 366 {
		days = 30
	}
	to := t.now().UTC().Truncate(time.Second).Add(time.Second)
	from := to.AddDate(0, 0, -days)
	s, err := t.store.SalesSummary(ctx, site.ID, from, to)
	if err != nil {
		return nil, out, t.fail(ctx, "sales_summary", err)
	}
	return nil, SalesSummaryOutput{
		From: rfc3339(s.From), To: rfc3339(s.To), Orders: s.Orders, RevenueCents: s.RevenueCents,
		Revenue: vocab.Price(s.RevenueCents, s.Currency), Currency: s.Currency,
		RefundedOrders: s.RefundedOrders, NewEnrollments: s.NewEnrollments,
	}, nil
}
