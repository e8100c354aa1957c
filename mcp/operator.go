package mcp

import (
	"context"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
	"github.com/lectern/lectern/vocab"
)

// The operator tools, each behind its operator scope. They see what the
// site's operators see: drafts, students, orders with coupons and refunds.

func (t *tools) listCourses(ctx context.Context, _ *gomcp.CallToolRequest, in ListCoursesInput) (*gomcp.CallToolResult, ListCoursesOutput, error) {
	p, err := operatorPage(ctx, t, "list_courses", "courses:read", in.PageInput, func(c *storage.Course) int64 { return c.ID },
		func(site tenant.ID, pg storage.Page) ([]storage.Course, int, error) {
			return t.store.ListCourses(ctx, site, in.IncludeDrafts, pg)
		},
		func(c *storage.Course) OperatorCourseOutput {
			return OperatorCourseOutput{
				ID: c.ID, Slug: c.Slug, Title: c.Title, Category: c.Category, Status: c.Status,
				PublishedAt: optTime(c.PublishedAt), UpdatedAt: rfc3339(c.UpdatedAt), Money: price(c.PriceCents, c.Currency),
			}
		})
	return nil, ListCoursesOutput{Courses: p.items, NextCursor: p.next, Total: p.total}, err
}

func (t *tools) listStudents(ctx context.Context, _ *gomcp.CallToolRequest, in ListStudentsInput) (*gomcp.CallToolResult, ListStudentsOutput, error) {
	// Students are listed by e-mail (no key), so the cursor is an offset.
	p, err := operatorPage(ctx, t, "list_students", "students:read", in.PageInput, nil,
		func(site tenant.ID, pg storage.Page) ([]storage.StudentView, int, error) {
			return t.store.ListStudents(ctx, site, in.Search, pg)
		},
		func(s *storage.StudentView) StudentOutput {
			return StudentOutput{UserID: s.UserID, Email: s.Email, Name: s.Name, Enrollments: s.Enrollments, Since: rfc3339(s.Since)}
		})
	return nil, ListStudentsOutput{Students: p.items, NextCursor: p.next, Total: p.total}, err
}

func (t *tools) recentOrders(ctx context.Context, _ *gomcp.CallToolRequest, in RecentOrdersInput) (*gomcp.CallToolResult, RecentOrdersOutput, error) {
	p, err := operatorPage(ctx, t, "recent_orders", "orders:read", in.PageInput, func(o *storage.OrderView) int64 { return o.ID },
		func(site tenant.ID, pg storage.Page) ([]storage.OrderView, int, error) {
			return t.store.RecentOrders(ctx, site, pg)
		},
		func(o *storage.OrderView) OrderOutput {
			items := make([]OrderItemOutput, len(o.Items))
			for j, it := range o.Items {
				items[j] = OrderItemOutput{Kind: it.Kind, Title: it.Title, Money: price(it.PriceCents, o.Currency)}
			}
			return OrderOutput{
				Number: o.Number, CustomerEmail: o.CustomerEmail, Status: o.Status, RefundStatus: o.RefundStatus,
				CouponCode: o.CouponCode, TotalCents: o.TotalCents, Currency: o.Currency,
				Total: vocab.Price(o.TotalCents, o.Currency), CreatedAt: rfc3339(o.CreatedAt), Items: items,
			}
		})
	return nil, RecentOrdersOutput{Orders: p.items, NextCursor: p.next, Total: p.total}, err
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
	currency := s.Currency
	if currency == "" && s.Orders == 0 {
		// No order names a currency: the site's is the one its catalog is
		// priced in, when there is one.
		o, err := t.store.Offerings(ctx, site.ID, t.now())
		if err != nil {
			return nil, out, t.fail(ctx, "sales_summary", err)
		}
		currency = catalogCurrency(o)
	}
	// Revenue is an amount, zero included ("0.00 USD"): vocab.Price would
	// call zero "Free", which is what a price reads, not a sum.
	return nil, SalesSummaryOutput{
		From: rfc3339(s.From), To: rfc3339(s.To), Orders: s.Orders, RevenueCents: s.RevenueCents,
		Revenue: vocab.Amount(s.RevenueCents, currency), Currency: currency,
		RefundedOrders: s.RefundedOrders, NewEnrollments: s.NewEnrollments,
	}, nil
}

// catalogCurrency is the one currency every published offering of o is
// priced in, or "" when they use several or there are none.
func catalogCurrency(o *storage.Offerings) string {
	if cur := o.Currencies(); len(cur) == 1 {
		return cur[0]
	}
	return ""
}
