package mcp

import (
	"context"
	"errors"
	"fmt"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lectern/lectern/authserver/scope"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// The member tools read and change the signed-in person's own rows at the
// request's site: every storage call names the site and the token's
// subject, so no argument can reach another member or another site.

func (t *tools) myEnrollments(ctx context.Context, _ *gomcp.CallToolRequest, in PageInput) (*gomcp.CallToolResult, MyEnrollmentsOutput, error) {
	var out MyEnrollmentsOutput
	site, user, err := t.person(ctx, scope.AccountRead)
	if err != nil {
		return nil, out, err
	}
	p, err := pageOf(ctx, t, "my_enrollments", in, func(e *storage.EnrollmentView) int64 { return e.ID },
		func(pg storage.Page) ([]storage.EnrollmentView, int, error) {
			return t.store.ListEnrollments(ctx, site.ID, user, pg)
		},
		asIs[storage.EnrollmentView])
	if err != nil {
		return nil, out, err
	}
	rows := p.items
	ids := make([]int64, len(rows))
	for i, e := range rows {
		ids[i] = e.CourseID
	}
	last, err := t.store.LastWatched(ctx, site.ID, user, ids)
	if err != nil {
		return nil, out, t.fail(ctx, "my_enrollments", err)
	}
	now := t.now()
	out.Enrollments = make([]EnrollmentOutput, len(rows))
	for i, e := range rows {
		o := enrollmentOutput(&e, now)
		if p, ok := last[e.CourseID]; ok {
			o.LastWatched = &LastWatchedOutput{LectureID: p.LectureID, PositionSeconds: p.PositionSeconds, Completed: p.Completed, UpdatedAt: rfc3339(p.UpdatedAt)}
		}
		out.Enrollments[i] = o
	}
	out.NextCursor, out.Total = p.next, p.total
	return nil, out, nil
}

func enrollmentOutput(e *storage.EnrollmentView, now time.Time) EnrollmentOutput {
	return EnrollmentOutput{
		CourseSlug: e.CourseSlug, CourseTitle: e.CourseTitle, EnrolledAt: rfc3339(e.EnrolledAt),
		ExpiresAt: optTime(e.ExpiresAt), HasLifetimeAccess: e.ExpiresAt == nil,
		AccessActive: e.ExpiresAt == nil || e.ExpiresAt.After(now),
	}
}

// maxEnrollmentScan bounds the search for one enrollment by slug.
const maxEnrollmentScan = 20

func (t *tools) myCourseProgress(ctx context.Context, _ *gomcp.CallToolRequest, in CourseProgressInput) (*gomcp.CallToolResult, CourseProgressOutput, error) {
	var out CourseProgressOutput
	site, user, err := t.person(ctx, scope.AccountRead)
	if err != nil {
		return nil, out, err
	}
	e, err := t.enrollment(ctx, site, user, in.CourseSlug)
	if err != nil {
		return nil, out, err
	}
	eo := enrollmentOutput(e, t.now())
	out = CourseProgressOutput{
		CourseSlug: eo.CourseSlug, CourseTitle: eo.CourseTitle, EnrolledAt: eo.EnrolledAt, ExpiresAt: eo.ExpiresAt,
		HasLifetimeAccess: eo.HasLifetimeAccess, AccessActive: eo.AccessActive,
	}
	progress, err := t.store.CourseProgress(ctx, site.ID, user, e.CourseID)
	if err != nil {
		return nil, out, t.fail(ctx, "my_course_progress", err)
	}
	// The outline of the published course gives lecture titles and
	// lengths. A course unpublished since the enrollment has none to show.
	d, err := t.store.CourseBySlug(ctx, site.ID, e.CourseSlug)
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		return nil, out, t.fail(ctx, "my_course_progress", err)
	}
	byLecture := make(map[int64]storage.LectureProgress, len(progress))
	for _, p := range progress {
		byLecture[p.LectureID] = p
	}
	if len(progress) > 0 { // newest first
		p := progress[0]
		out.LastWatched = &LectureProgressOutput{
			LectureID: p.LectureID, PositionSeconds: p.PositionSeconds, Completed: p.Completed, UpdatedAt: rfc3339(p.UpdatedAt),
		}
	}
	if d != nil {
		for _, s := range d.Sections {
			for _, l := range s.Lectures {
				out.PublishedLectures++
				out.TotalDurationSeconds += l.DurationSeconds
				p := byLecture[l.ID]
				if p.Completed {
					out.CompletedLectures++
				} else if out.NextLecture == nil {
					out.NextLecture = &NextLectureOutput{LectureID: l.ID, LectureTitle: l.Title, SectionTitle: s.Title,
						DurationSeconds: l.DurationSeconds, PositionSeconds: p.PositionSeconds}
				}
				if out.LastWatched != nil && l.ID == out.LastWatched.LectureID {
					out.LastWatched.LectureTitle = l.Title
					out.LastWatched.SectionTitle = s.Title
					out.LastWatched.DurationSeconds = l.DurationSeconds
				}
			}
		}
	}
	if out.PublishedLectures > 0 {
		out.PercentComplete = out.CompletedLectures * 100 / out.PublishedLectures
	}
	return nil, out, nil
}

// enrollment finds the member's enrollment in the course with slug.
func (t *tools) enrollment(ctx context.Context, site *tenant.Site, user, slug string) (*storage.EnrollmentView, error) {
	var after int64
	for range maxEnrollmentScan {
		rows, _, err := t.store.ListEnrollments(ctx, site.ID, user, storage.Page{After: after, Limit: 100})
		if err != nil {
			return nil, t.fail(ctx, "my_course_progress", err)
		}
		for i := range rows {
			if rows[i].CourseSlug == slug {
				return &rows[i], nil
			}
		}
		if len(rows) < 100 {
			break
		}
		after = rows[len(rows)-1].ID
	}
	return nil, fmt.Errorf("you are not enrolled in a course with the slug %q; my_enrollments lists your courses", slug)
}

func (t *tools) myPurchases(ctx context.Context, _ *gomcp.CallToolRequest, in MyPurchasesInput) (*gomcp.CallToolResult, MyPurchasesOutput, error) {
	var out MyPurchasesOutput
	site, user, err := t.person(ctx, scope.AccountRead)
	if err != nil {
		return nil, out, err
	}
	if in.Cursor != "" && in.Kind == "" {
		return nil, out, errors.New("cursor belongs to one kind of purchase: pass kind with it")
	}
	after, err := decodeCursor(in.Cursor)
	if err != nil {
		return nil, out, err
	}
	limit := pageLimit(in.Limit)
	want := func(kind string) bool { return in.Kind == "" || in.Kind == kind }
	if want(kindDigitalProducts) {
		p, err := fetch(ctx, t, "my_purchases", after, limit, func(r *storage.ProductPurchaseView) int64 { return r.ID },
			func(pg storage.Page) ([]storage.ProductPurchaseView, int, error) {
				return t.store.ListProductPurchases(ctx, site.ID, user, pg)
			},
			func(r *storage.ProductPurchaseView) ProductPurchaseOutput {
				return ProductPurchaseOutput{ID: r.ID, Slug: r.Slug, Title: r.Title, PurchasedAt: rfc3339(r.PurchasedAt)}
			})
		if err != nil {
			return nil, out, err
		}
		out.DigitalProducts = &ProductPurchases{Items: p.items, NextCursor: p.next, Total: p.total}
	}
	if want(kindConsultingServices) {
		p, err := fetch(ctx, t, "my_purchases", after, limit, func(r *storage.ConsultingPurchaseView) int64 { return r.ID },
			func(pg storage.Page) ([]storage.ConsultingPurchaseView, int, error) {
				return t.store.ListConsultingPurchases(ctx, site.ID, user, pg)
			},
			func(r *storage.ConsultingPurchaseView) ConsultingPurchaseOutput {
				return ConsultingPurchaseOutput{ID: r.ID, Slug: r.Slug, Title: r.Title, PurchasedAt: rfc3339(r.PurchasedAt),
					SessionsIncluded: r.SessionsIncluded, SessionsUsed: r.SessionsUsed}
			})
		if err != nil {
			return nil, out, err
		}
		out.ConsultingServices = &ConsultingPurchases{Items: p.items, NextCursor: p.next, Total: p.total}
	}
	if want(kindEventRegistrations) {
		p, err := fetch(ctx, t, "my_purchases", after, limit, func(r *storage.EventRegistrationView) int64 { return r.ID },
			func(pg storage.Page) ([]storage.EventRegistrationView, int, error) {
				return t.store.ListEventRegistrations(ctx, site.ID, user, pg)
			},
			func(r *storage.EventRegistrationView) EventRegistrationOutput {
				return EventRegistrationOutput{ID: r.ID, EventSlug: r.EventSlug, Title: r.Title, StartsAt: rfc3339(r.StartsAt),
					EndsAt: rfc3339(r.EndsAt), RegisteredAt: rfc3339(r.RegisteredAt)}
			})
		if err != nil {
			return nil, out, err
		}
		out.EventRegistrations = &EventRegistrations{Items: p.items, NextCursor: p.next, Total: p.total}
	}
	return nil, out, nil
}

func (t *tools) myNotifications(ctx context.Context, _ *gomcp.CallToolRequest, in MyNotificationsInput) (*gomcp.CallToolResult, MyNotificationsOutput, error) {
	var out MyNotificationsOutput
	site, user, err := t.person(ctx, scope.AccountRead)
	if err != nil {
		return nil, out, err
	}
	p, err := pageOf(ctx, t, "my_notifications", in.PageInput, func(n *storage.Notification) int64 { return n.ID },
		func(pg storage.Page) ([]storage.Notification, int, error) {
			return t.store.ListNotifications(ctx, site.ID, user, pg, in.UnreadOnly)
		},
		notificationOutput)
	if err != nil {
		return nil, out, err
	}
	unread, err := t.store.UnreadNotificationCount(ctx, site.ID, user)
	if err != nil {
		return nil, out, t.fail(ctx, "my_notifications", err)
	}
	return nil, MyNotificationsOutput{Notifications: p.items, NextCursor: p.next, Total: p.total, UnreadCount: unread}, nil
}

func (t *tools) markNotificationRead(ctx context.Context, _ *gomcp.CallToolRequest, in MarkNotificationReadInput) (*gomcp.CallToolResult, MarkNotificationReadOutput, error) {
	var out MarkNotificationReadOutput
	site, user, err := t.person(ctx, scope.AccountWrite)
	if err != nil {
		return nil, out, err
	}
	n, err := t.store.MarkNotificationRead(ctx, site.ID, user, in.ID, t.now())
	if errors.Is(err, storage.ErrNotFound) {
		return nil, out, fmt.Errorf("you have no notification with the id %d; my_notifications lists them", in.ID)
	}
	if err != nil {
		return nil, out, t.fail(ctx, "mark_notification_read", err)
	}
	unread, err := t.store.UnreadNotificationCount(ctx, site.ID, user)
	if err != nil {
		return nil, out, t.fail(ctx, "mark_notification_read", err)
	}
	out.Notification, out.UnreadCount = notificationOutput(n), unread
	return nil, out, nil
}
