package memberapi

import (
	"context"
	"strconv"
	"sync"

	graphql "github.com/graph-gophers/graphql-go"

	"github.com/lectern/lectern/authserver/scope"
	"github.com/lectern/lectern/storage"
)

// resolver is the root of the schema: Query and Mutation fields. It holds
// nothing; everything about the request is in the context (requestFrom).
type resolver struct{}

// Viewer implements Query.viewer.
func (resolver) Viewer(ctx context.Context) (*viewerResolver, error) {
	rq := requestFrom(ctx)
	if err := rq.need(scope.AccountRead); err != nil {
		return nil, err
	}
	return &viewerResolver{rq: rq}, nil
}

type viewerResolver struct{ rq *request }

func (v *viewerResolver) ID() graphql.ID { return graphql.ID(v.rq.userID()) }

func (v *viewerResolver) Name(ctx context.Context) (string, error) {
	u, err := v.rq.loadUser(ctx)
	if err != nil {
		return "", err
	}
	return u.Name, nil
}

func (v *viewerResolver) Email(ctx context.Context) (string, error) {
	u, err := v.rq.loadUser(ctx)
	if err != nil {
		return "", err
	}
	return u.Email, nil
}

func (v *viewerResolver) Schools(ctx context.Context) ([]*schoolResolver, error) {
	sites, err := v.rq.loadSchools(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*schoolResolver, len(sites))
	for i := range sites {
		out[i] = &schoolResolver{s: &sites[i], current: sites[i].SiteID == v.rq.site.ID}
	}
	return out, nil
}

type schoolResolver struct {
	s       *storage.UserSiteRoles
	current bool
}

func (s *schoolResolver) ID() graphql.ID {
	return graphql.ID(strconv.FormatInt(int64(s.s.SiteID), 10))
}
func (s *schoolResolver) Slug() string    { return s.s.Slug }
func (s *schoolResolver) Name() string    { return s.s.Name }
func (s *schoolResolver) Origin() string  { return s.s.Origin }
func (s *schoolResolver) Roles() []string { return append([]string{}, s.s.Roles...) }
func (s *schoolResolver) IsCurrent() bool { return s.current }

// EnrolledCourses implements Viewer.enrolledCourses. The page is read
// first; the last watched lectures of all its nodes are then read together,
// on the first lastWatchedLecture a node resolves (one LastWatched call per
// page whatever its size).
func (v *viewerResolver) EnrolledCourses(ctx context.Context, args pageArgs) (*connection[*enrolledCourseResolver], error) {
	p, first, err := args.page(kindEnrollment)
	if err != nil {
		return nil, err
	}
	rq := v.rq
	rows, total, err := rq.store.ListEnrollments(ctx, rq.site.ID, rq.userID(), p)
	if err != nil {
		return nil, storeError(err, "")
	}
	batch := &lastWatchedBatch{rq: rq, courseIDs: make([]int64, 0, min(len(rows), first))}
	for i := range cap(batch.courseIDs) {
		batch.courseIDs = append(batch.courseIDs, rows[i].CourseID)
	}
	return newConnection(kindEnrollment, rows, total, first,
		func(e *storage.EnrollmentView) int64 { return e.ID },
		func(e *storage.EnrollmentView) *enrolledCourseResolver {
			return &enrolledCourseResolver{e: e, batch: batch}
		}), nil
}

type enrolledCourseResolver struct {
	e     *storage.EnrollmentView
	batch *lastWatchedBatch
}

func (c *enrolledCourseResolver) ID() graphql.ID          { return int64ID(c.e.ID) }
func (c *enrolledCourseResolver) Slug() string            { return c.e.CourseSlug }
func (c *enrolledCourseResolver) Title() string           { return c.e.CourseTitle }
func (c *enrolledCourseResolver) EnrolledAt() DateTime    { return dateTime(c.e.EnrolledAt) }
func (c *enrolledCourseResolver) ExpireDate() *DateTime   { return optDateTime(c.e.ExpiresAt) }
func (c *enrolledCourseResolver) HasLifetimeAccess() bool { return c.e.ExpiresAt == nil }

func (c *enrolledCourseResolver) LastWatchedLecture(ctx context.Context) (*lastWatchedResolver, error) {
	m, err := c.batch.load(ctx)
	if err != nil {
		return nil, err
	}
	p, ok := m[c.e.CourseID]
	if !ok {
		return nil, nil
	}
	return &lastWatchedResolver{p: p}, nil
}

// lastWatchedBatch reads the last watched lectures of one page of
// enrollments with one LastWatched call, made by whichever node asks first.
type lastWatchedBatch struct {
	rq        *request
	courseIDs []int64

	once sync.Once
	m    map[int64]storage.LectureProgress
	err  error
}

func (b *lastWatchedBatch) load(ctx context.Context) (map[int64]storage.LectureProgress, error) {
	b.once.Do(func() {
		m, err := b.rq.store.LastWatched(ctx, b.rq.site.ID, b.rq.userID(), b.courseIDs)
		if err != nil {
			b.err = storeError(err, "")
			return
		}
		b.m = m
	})
	return b.m, b.err
}

type lastWatchedResolver struct{ p storage.LectureProgress }

func (l *lastWatchedResolver) LectureID() graphql.ID  { return int64ID(l.p.LectureID) }
func (l *lastWatchedResolver) PositionSeconds() int32 { return clampInt32(l.p.PositionSeconds) }
func (l *lastWatchedResolver) Completed() bool        { return l.p.Completed }
func (l *lastWatchedResolver) WatchedAt() DateTime    { return dateTime(l.p.UpdatedAt) }

// DigitalProducts implements Viewer.digitalProducts.
func (v *viewerResolver) DigitalProducts(ctx context.Context, args pageArgs) (*connection[*productResolver], error) {
	p, first, err := args.page(kindProduct)
	if err != nil {
		return nil, err
	}
	rows, total, err := v.rq.store.ListProductPurchases(ctx, v.rq.site.ID, v.rq.userID(), p)
	if err != nil {
		return nil, storeError(err, "")
	}
	return newConnection(kindProduct, rows, total, first,
		func(r *storage.ProductPurchaseView) int64 { return r.ID },
		func(r *storage.ProductPurchaseView) *productResolver { return &productResolver{r} }), nil
}

// productResolver is a bought digital product: what and when, nothing of
// the order behind it (spec: purchase connections carry no order number,
// coupon, refund status or invoice).
type productResolver struct{ p *storage.ProductPurchaseView }

func (r *productResolver) ID() graphql.ID        { return int64ID(r.p.ID) }
func (r *productResolver) Slug() string          { return r.p.Slug }
func (r *productResolver) Title() string         { return r.p.Title }
func (r *productResolver) PurchasedAt() DateTime { return dateTime(r.p.PurchasedAt) }

// ConsultingServices implements Viewer.consultingServices.
func (v *viewerResolver) ConsultingServices(ctx context.Context, args pageArgs) (*connection[*consultingResolver], error) {
	p, first, err := args.page(kindConsulting)
	if err != nil {
		return nil, err
	}
	rows, total, err := v.rq.store.ListConsultingPurchases(ctx, v.rq.site.ID, v.rq.userID(), p)
	if err != nil {
		return nil, storeError(err, "")
	}
	return newConnection(kindConsulting, rows, total, first,
		func(r *storage.ConsultingPurchaseView) int64 { return r.ID },
		func(r *storage.ConsultingPurchaseView) *consultingResolver { return &consultingResolver{r} }), nil
}

type consultingResolver struct {
	c *storage.ConsultingPurchaseView
}

func (r *consultingResolver) ID() graphql.ID          { return int64ID(r.c.ID) }
func (r *consultingResolver) Slug() string            { return r.c.Slug }
func (r *consultingResolver) Title() string           { return r.c.Title }
func (r *consultingResolver) PurchasedAt() DateTime   { return dateTime(r.c.PurchasedAt) }
func (r *consultingResolver) SessionsIncluded() int32 { return clampInt32(r.c.SessionsIncluded) }
func (r *consultingResolver) SessionsUsed() int32     { return clampInt32(r.c.SessionsUsed) }

// EventRegistrations implements Viewer.eventRegistrations.
func (v *viewerResolver) EventRegistrations(ctx context.Context, args pageArgs) (*connection[*registrationResolver], error) {
	p, first, err := args.page(kindRegistration)
	if err != nil {
		return nil, err
	}
	rows, total, err := v.rq.store.ListEventRegistrations(ctx, v.rq.site.ID, v.rq.userID(), p)
	if err != nil {
		return nil, storeError(err, "")
	}
	return newConnection(kindRegistration, rows, total, first,
		func(r *storage.EventRegistrationView) int64 { return r.ID },
		func(r *storage.EventRegistrationView) *registrationResolver { return &registrationResolver{r} }), nil
}

type registrationResolver struct {
	r *storage.EventRegistrationView
}

func (r *registrationResolver) ID() graphql.ID         { return int64ID(r.r.ID) }
func (r *registrationResolver) EventSlug() string      { return r.r.EventSlug }
func (r *registrationResolver) Title() string          { return r.r.Title }
func (r *registrationResolver) StartsAt() DateTime     { return dateTime(r.r.StartsAt) }
func (r *registrationResolver) EndsAt() DateTime       { return dateTime(r.r.EndsAt) }
func (r *registrationResolver) RegisteredAt() DateTime { return dateTime(r.r.RegisteredAt) }

func int64ID(id int64) graphql.ID { return graphql.ID(strconv.FormatInt(id, 10)) }
