package adminapi

import (
	"context"
	"time"
)

// maxPeriod bounds an analytics period; defaultPeriod is the one asked
// for without from.
const (
	maxPeriod     = 366 * 24 * time.Hour
	defaultPeriod = 30 * 24 * time.Hour
)

// period resolves the period's bounds: to defaults to now, from to 30 days
// before to.
func (h *Handler) period(fromParam *From, toParam *To) (from, to time.Time, err error) {
	to = h.now().UTC().Truncate(time.Second)
	if toParam != nil {
		to = *toParam
	}
	from = to.Add(-defaultPeriod)
	if fromParam != nil {
		from = *fromParam
	}
	return from, to, checkPeriod(from, to)
}

func checkPeriod(from, to time.Time) error {
	switch {
	case !to.After(from):
		return errBadRequest("to must be after from", InvalidField{Field: "to", Message: "must be after from"})
	case to.Sub(from) > maxPeriod:
		return errBadRequest("the period may be at most 366 days", InvalidField{Field: "to", Message: "must be at most 366 days after from"})
	}
	return nil
}

// GetSalesSummary implements GET /analytics/sales (analytics:read): orders
// created in [from, to).
func (h *Handler) GetSalesSummary(ctx context.Context, req GetSalesSummaryRequestObject) (GetSalesSummaryResponseObject, error) {
	from, to, err := h.period(req.Params.From, req.Params.To)
	if err != nil {
		return nil, err
	}
	s, err := h.store.SalesSummary(ctx, siteOf(ctx), from, to)
	if err != nil {
		return nil, err
	}
	return GetSalesSummary200JSONResponse{From: s.From, To: s.To, Orders: s.Orders, RevenueCents: s.RevenueCents,
		RefundedOrders: s.RefundedOrders, Currency: s.Currency, NewEnrollments: s.NewEnrollments}, nil
}

// GetEnrollmentSummary implements GET /analytics/enrollments
// (analytics:read): enrollments created in [from, to), per course.
func (h *Handler) GetEnrollmentSummary(ctx context.Context, req GetEnrollmentSummaryRequestObject) (GetEnrollmentSummaryResponseObject, error) {
	from, to, err := h.period(req.Params.From, req.Params.To)
	if err != nil {
		return nil, err
	}
	rows, err := h.store.EnrollmentSummary(ctx, siteOf(ctx), from, to)
	if err != nil {
		return nil, err
	}
	out := EnrollmentSummary{From: from.UTC(), To: to.UTC(), Courses: make([]CourseEnrollmentCount, 0, len(rows))}
	for _, r := range rows {
		out.Total += r.Enrollments
		out.Courses = append(out.Courses, CourseEnrollmentCount{CourseId: r.CourseID, Slug: r.Slug, Title: r.Title, Enrollments: r.Enrollments})
	}
	return GetEnrollmentSummary200JSONResponse(out), nil
}
