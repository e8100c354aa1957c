package storage

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/lectern/lectern/tenant"
)

// Page asks for up to Limit rows after the row with ID After (keyset
// pagination: stable under inserts). Limit ≤ 0 means the default of 20.
type Page struct {
	After int64
	Limit int
}

// SubscriptionPage asks for up to Limit notification settings after the one
// named by (AfterTopic, AfterChannel), in topic, then channel order (keyset
// pagination over the table's key). An empty AfterTopic starts at the first.
// Limit ≤ 0 means the default of 20.
type SubscriptionPage struct {
	AfterTopic   string
	AfterChannel string
	Limit        int
}

// EnrollmentView is an enrollment with its course.
type EnrollmentView struct {
	ID          int64
	CourseID    int64
	CourseSlug  string
	CourseTitle string
	EnrolledAt  time.Time
	ExpiresAt   *time.Time
}

// ProductPurchaseView is a bought digital product: what, and when. Never
// the order's number, coupon, refund or invoice (spec: purchase connections
// state what the member bought and nothing more).
type ProductPurchaseView struct {
	ID          int64
	Slug        string
	Title       string
	PurchasedAt time.Time
}

// ConsultingPurchaseView is a bought consulting service and its usage.
type ConsultingPurchaseView struct {
	ID               int64
	Slug             string
	Title            string
	PurchasedAt      time.Time
	SessionsIncluded int
	SessionsUsed     int
}

// EventRegistrationView is a registration for an event.
type EventRegistrationView struct {
	ID           int64
	EventSlug    string
	Title        string
	StartsAt     time.Time
	EndsAt       time.Time
	RegisteredAt time.Time
}

// MemberStore reads and changes one member's own data at one site. Every
// method takes the site and the user: no method can reach another member's
// rows.
type MemberStore interface {
	// ListEnrollments returns a page of the user's enrollments in ID order
	// and the total count.
	ListEnrollments(ctx context.Context, site tenant.ID, userID string, p Page) ([]EnrollmentView, int, error)
	// LastWatched returns, for each of the courses, the user's most recent
	// lecture progress, in one query whatever the number of courses.
	LastWatched(ctx context.Context, site tenant.ID, userID string, courseIDs []int64) (map[int64]LectureProgress, error)
	// CourseProgress returns the user's progress in every lecture of the
	// course that they started, most recently updated first.
	CourseProgress(ctx context.Context, site tenant.ID, userID string, courseID int64) ([]LectureProgress, error)
	ListProductPurchases(ctx context.Context, site tenant.ID, userID string, p Page) ([]ProductPurchaseView, int, error)
	ListConsultingPurchases(ctx context.Context, site tenant.ID, userID string, p Page) ([]ConsultingPurchaseView, int, error)
	ListEventRegistrations(ctx context.Context, site tenant.ID, userID string, p Page) ([]EventRegistrationView, int, error)
	// ListNotifications returns the user's notifications, newest first
	// (After is then an upper bound: IDs below it).
	ListNotifications(ctx context.Context, site tenant.ID, userID string, p Page, unreadOnly bool) ([]Notification, int, error)
	UnreadNotificationCount(ctx context.Context, site tenant.ID, userID string) (int, error)
	// MarkNotificationRead marks one of the user's notifications read and
	// returns it; another member's notification is ErrNotFound.
	MarkNotificationRead(ctx context.Context, site tenant.ID, userID string, id int64, at time.Time) (*Notification, error)
	// MarkAllNotificationsRead marks every unread notification read and
	// returns how many it marked.
	MarkAllNotificationsRead(ctx context.Context, site tenant.ID, userID string, at time.Time) (int, error)
	// ListNotificationSubscriptions returns a page of the user's
	// notification settings in topic, channel order and the total count.
	ListNotificationSubscriptions(ctx context.Context, site tenant.ID, userID string, p SubscriptionPage) ([]NotificationSubscription, int, error)
	// NotificationSubscription returns one setting; none is ErrNotFound.
	NotificationSubscription(ctx context.Context, site tenant.ID, userID, topic, channel string) (*NotificationSubscription, error)
	// SetNotificationSubscription creates or changes one subscription.
	SetNotificationSubscription(ctx context.Context, sub *NotificationSubscription) error
}

// CourseQuery searches the published catalog.
type CourseQuery struct {
	Text     string // matched against title, subtitle and description, case-insensitively
	Category string // exact, case-insensitive
	Page
}

// CourseDetail is a published course with its lecturers and outline
// (published sections' published lectures).
type CourseDetail struct {
	Course
	Lecturers []Lecturer
	Sections  []SectionOutline
}

// SectionOutline is a section and its published lectures.
type SectionOutline struct {
	Section
	Lectures []Lecture
}

// Offerings is what a site sells, published items only.
type Offerings struct {
	Courses            []Course
	MembershipPlans    []MembershipPlan
	DigitalProducts    []DigitalProduct
	ConsultingServices []ConsultingService
	Events             []Event // public, upcoming
}

// Currencies are the currencies the offerings are priced in, upper case,
// each once, in the order first met (courses, plans, products, services,
// events).
func (o *Offerings) Currencies() []string {
	var cur []string
	add := func(c string) {
		if c = strings.ToUpper(c); c != "" && !slices.Contains(cur, c) {
			cur = append(cur, c)
		}
	}
	for _, c := range o.Courses {
		add(c.Currency)
	}
	for _, p := range o.MembershipPlans {
		add(p.Currency)
	}
	for _, p := range o.DigitalProducts {
		add(p.Currency)
	}
	for _, s := range o.ConsultingServices {
		add(s.Currency)
	}
	for _, e := range o.Events {
		add(e.Currency)
	}
	return cur
}

// CatalogStore reads a site's public catalog: published items only. Drafts
// and non-public events never come out of it.
type CatalogStore interface {
	SearchCourses(ctx context.Context, site tenant.ID, q CourseQuery) ([]Course, int, error)
	// CourseBySlug returns a published course; a draft is ErrNotFound.
	CourseBySlug(ctx context.Context, site tenant.ID, slug string) (*CourseDetail, error)
	// ListUpcomingEvents returns public, published events starting at or
	// after from, soonest first (After is an event ID cursor in that order's
	// tie-break).
	ListUpcomingEvents(ctx context.Context, site tenant.ID, from time.Time, p Page) ([]Event, int, error)
	Offerings(ctx context.Context, site tenant.ID, now time.Time) (*Offerings, error)
	Categories(ctx context.Context, site tenant.ID) ([]string, error)
}

// StudentView is a person with the student role at a site.
type StudentView struct {
	UserID      string
	Email       string
	Name        string
	Enrollments int
	Since       time.Time
}

// OrderView is an order with its items: what operators see.
type OrderView struct {
	Order
	CustomerEmail string
	Items         []OrderItem `gorm:"-"`
}

// SalesSummary aggregates orders over a period.
type SalesSummary struct {
	From, To       time.Time
	Orders         int
	RevenueCents   int64
	RefundedOrders int
	Currency       string
	NewEnrollments int
}

// OperatorStore reads what operators see: every course (drafts too),
// students, orders and sales.
type OperatorStore interface {
	ListCourses(ctx context.Context, site tenant.ID, includeDrafts bool, p Page) ([]Course, int, error)
	ListStudents(ctx context.Context, site tenant.ID, search string, p Page) ([]StudentView, int, error)
	// RecentOrders returns orders newest first (After: IDs below it).
	RecentOrders(ctx context.Context, site tenant.ID, p Page) ([]OrderView, int, error)
	SalesSummary(ctx context.Context, site tenant.ID, from, to time.Time) (*SalesSummary, error)
}
