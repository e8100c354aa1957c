package storage

import (
	"time"

	"github.com/lectern/lectern/tenant"
)

// Publication states of catalog items. Only published items are public.
const (
	StatusDraft     = "draft"
	StatusPublished = "published"
)

// Course is a course of a site's catalog.
type Course struct {
	ID          int64     `gorm:"primaryKey;autoIncrement"`
	SiteID      tenant.ID `gorm:"not null;uniqueIndex:courses_site_slug,priority:1"`
	Slug        string    `gorm:"size:120;not null;uniqueIndex:courses_site_slug,priority:2"`
	Title       string    `gorm:"size:300;not null"`
	Subtitle    string    `gorm:"size:300;not null"`
	Description string    `gorm:"type:text;not null"`
	Category    string    `gorm:"size:120;not null"`
	PriceCents  int64     `gorm:"not null"`
	Currency    string    `gorm:"size:3;not null"`
	Status      string    `gorm:"size:16;not null"`
	ImageURL    string    `gorm:"size:1000;not null"`
	PublishedAt *time.Time
	CreatedAt   time.Time `gorm:"not null"`
	UpdatedAt   time.Time `gorm:"not null"`
}

// Lecturer teaches courses at a site; UserID links a person when known.
type Lecturer struct {
	ID        int64     `gorm:"primaryKey;autoIncrement"`
	SiteID    tenant.ID `gorm:"not null;uniqueIndex:lecturers_site_slug,priority:1"`
	Slug      string    `gorm:"size:120;not null;uniqueIndex:lecturers_site_slug,priority:2"`
	Name      string    `gorm:"size:200;not null"`
	Bio       string    `gorm:"type:text;not null"`
	UserID    *string   `gorm:"size:40"`
	CreatedAt time.Time `gorm:"not null"`
	UpdatedAt time.Time `gorm:"not null"`
}

// CourseLecturer links a lecturer to a course, in display order.
type CourseLecturer struct {
	SiteID     tenant.ID `gorm:"not null"`
	CourseID   int64     `gorm:"primaryKey"`
	LecturerID int64     `gorm:"primaryKey"`
	Position   int       `gorm:"not null"`
}

// Section groups lectures of a course.
type Section struct {
	ID       int64     `gorm:"primaryKey;autoIncrement"`
	SiteID   tenant.ID `gorm:"not null"`
	CourseID int64     `gorm:"not null;index"`
	Title    string    `gorm:"size:300;not null"`
	Position int       `gorm:"not null"`
}

// Lecture is one lesson. FreePreview lectures may be watched by anyone;
// every published lecture's title is part of the public outline.
type Lecture struct {
	ID              int64     `gorm:"primaryKey;autoIncrement"`
	SiteID          tenant.ID `gorm:"not null"`
	CourseID        int64     `gorm:"not null;index"`
	SectionID       int64     `gorm:"not null;index"`
	Title           string    `gorm:"size:300;not null"`
	Position        int       `gorm:"not null"`
	DurationSeconds int       `gorm:"not null"`
	FreePreview     bool      `gorm:"not null"`
	Status          string    `gorm:"size:16;not null"`
}

// Enrollment gives a user access to a course until ExpiresAt (nil: lifetime).
type Enrollment struct {
	ID         int64     `gorm:"primaryKey;autoIncrement"`
	SiteID     tenant.ID `gorm:"not null;uniqueIndex:enrollments_site_user_course,priority:1"`
	UserID     string    `gorm:"size:40;not null;uniqueIndex:enrollments_site_user_course,priority:2"`
	CourseID   int64     `gorm:"not null;uniqueIndex:enrollments_site_user_course,priority:3"`
	EnrolledAt time.Time `gorm:"not null"`
	ExpiresAt  *time.Time
}

// LectureProgress is a user's playback position in a lecture.
type LectureProgress struct {
	ID              int64     `gorm:"primaryKey;autoIncrement"`
	SiteID          tenant.ID `gorm:"not null;uniqueIndex:progress_site_user_lecture,priority:1"`
	UserID          string    `gorm:"size:40;not null;uniqueIndex:progress_site_user_lecture,priority:2"`
	LectureID       int64     `gorm:"not null;uniqueIndex:progress_site_user_lecture,priority:3"`
	CourseID        int64     `gorm:"not null"`
	PositionSeconds int       `gorm:"not null"`
	Completed       bool      `gorm:"not null"`
	UpdatedAt       time.Time `gorm:"not null"`
}

// DigitalProduct is a downloadable product.
type DigitalProduct struct {
	ID          int64     `gorm:"primaryKey;autoIncrement"`
	SiteID      tenant.ID `gorm:"not null;uniqueIndex:digital_products_site_slug,priority:1"`
	Slug        string    `gorm:"size:120;not null;uniqueIndex:digital_products_site_slug,priority:2"`
	Title       string    `gorm:"size:300;not null"`
	Description string    `gorm:"type:text;not null"`
	PriceCents  int64     `gorm:"not null"`
	Currency    string    `gorm:"size:3;not null"`
	Status      string    `gorm:"size:16;not null"`
	CreatedAt   time.Time `gorm:"not null"`
	UpdatedAt   time.Time `gorm:"not null"`
}

// DigitalProductPurchase records that a user bought a digital product.
type DigitalProductPurchase struct {
	ID          int64     `gorm:"primaryKey;autoIncrement"`
	SiteID      tenant.ID `gorm:"not null;index:dp_purchases_site_user,priority:1"`
	UserID      string    `gorm:"size:40;not null;index:dp_purchases_site_user,priority:2"`
	ProductID   int64     `gorm:"not null"`
	OrderID     *int64
	PurchasedAt time.Time `gorm:"not null"`
}

// ConsultingService is a bookable block of consulting sessions.
type ConsultingService struct {
	ID          int64     `gorm:"primaryKey;autoIncrement"`
	SiteID      tenant.ID `gorm:"not null;uniqueIndex:consulting_services_site_slug,priority:1"`
	Slug        string    `gorm:"size:120;not null;uniqueIndex:consulting_services_site_slug,priority:2"`
	Title       string    `gorm:"size:300;not null"`
	Description string    `gorm:"type:text;not null"`
	PriceCents  int64     `gorm:"not null"`
	Currency    string    `gorm:"size:3;not null"`
	Sessions    int       `gorm:"not null"`
	Status      string    `gorm:"size:16;not null"`
	CreatedAt   time.Time `gorm:"not null"`
	UpdatedAt   time.Time `gorm:"not null"`
}

// ConsultingPurchase records a bought consulting service and its usage.
type ConsultingPurchase struct {
	ID               int64     `gorm:"primaryKey;autoIncrement"`
	SiteID           tenant.ID `gorm:"not null;index:consulting_purchases_site_user,priority:1"`
	UserID           string    `gorm:"size:40;not null;index:consulting_purchases_site_user,priority:2"`
	ServiceID        int64     `gorm:"not null"`
	OrderID          *int64
	SessionsIncluded int       `gorm:"not null"`
	SessionsUsed     int       `gorm:"not null"`
	PurchasedAt      time.Time `gorm:"not null"`
}

// Event is a live event (webinar, workshop) at a site.
type Event struct {
	ID          int64     `gorm:"primaryKey;autoIncrement"`
	SiteID      tenant.ID `gorm:"not null;uniqueIndex:events_site_slug,priority:1"`
	Slug        string    `gorm:"size:120;not null;uniqueIndex:events_site_slug,priority:2"`
	Title       string    `gorm:"size:300;not null"`
	Description string    `gorm:"type:text;not null"`
	Location    string    `gorm:"size:300;not null"`
	StartsAt    time.Time `gorm:"not null"`
	EndsAt      time.Time `gorm:"not null"`
	PriceCents  int64     `gorm:"not null"`
	Currency    string    `gorm:"size:3;not null"`
	Capacity    int       `gorm:"not null"`
	Public      bool      `gorm:"not null"`
	Status      string    `gorm:"size:16;not null"`
	CreatedAt   time.Time `gorm:"not null"`
	UpdatedAt   time.Time `gorm:"not null"`
}

// EventRegistration records that a user registered for an event.
type EventRegistration struct {
	ID           int64     `gorm:"primaryKey;autoIncrement"`
	SiteID       tenant.ID `gorm:"not null;uniqueIndex:event_registrations_site_user_event,priority:1"`
	UserID       string    `gorm:"size:40;not null;uniqueIndex:event_registrations_site_user_event,priority:2"`
	EventID      int64     `gorm:"not null;uniqueIndex:event_registrations_site_user_event,priority:3"`
	OrderID      *int64
	RegisteredAt time.Time `gorm:"not null"`
}

// Notification is a message to one user at one site.
type Notification struct {
	ID        int64     `gorm:"primaryKey;autoIncrement"`
	SiteID    tenant.ID `gorm:"not null;index:notifications_site_user,priority:1"`
	UserID    string    `gorm:"size:40;not null;index:notifications_site_user,priority:2"`
	Kind      string    `gorm:"size:64;not null"`
	Title     string    `gorm:"size:300;not null"`
	Body      string    `gorm:"type:text;not null"`
	URL       string    `gorm:"column:url;size:1000;not null"`
	CreatedAt time.Time `gorm:"not null"`
	ReadAt    *time.Time
}

// NotificationSubscription is whether a user receives a topic on a channel.
type NotificationSubscription struct {
	SiteID    tenant.ID `gorm:"primaryKey"`
	UserID    string    `gorm:"primaryKey;size:40"`
	Topic     string    `gorm:"primaryKey;size:64"`
	Channel   string    `gorm:"primaryKey;size:32"`
	Enabled   bool      `gorm:"not null"`
	UpdatedAt time.Time `gorm:"not null"`
}

// MembershipPlan is a recurring plan that grants access to the site.
type MembershipPlan struct {
	ID          int64     `gorm:"primaryKey;autoIncrement"`
	SiteID      tenant.ID `gorm:"not null;uniqueIndex:membership_plans_site_slug,priority:1"`
	Slug        string    `gorm:"size:120;not null;uniqueIndex:membership_plans_site_slug,priority:2"`
	Title       string    `gorm:"size:300;not null"`
	Description string    `gorm:"type:text;not null"`
	PriceCents  int64     `gorm:"not null"`
	Currency    string    `gorm:"size:3;not null"`
	Interval    string    `gorm:"size:16;not null"`
	Status      string    `gorm:"size:16;not null"`
	CreatedAt   time.Time `gorm:"not null"`
	UpdatedAt   time.Time `gorm:"not null"`
}

// Order is a purchase, with the details operators see and members never do
// (number, coupon, refund status).
type Order struct {
	ID           int64     `gorm:"primaryKey;autoIncrement"`
	SiteID       tenant.ID `gorm:"not null;uniqueIndex:orders_site_number,priority:1;index:orders_site_created,priority:1"`
	Number       string    `gorm:"size:40;not null;uniqueIndex:orders_site_number,priority:2"`
	UserID       string    `gorm:"size:40;not null"`
	TotalCents   int64     `gorm:"not null"`
	Currency     string    `gorm:"size:3;not null"`
	CouponCode   string    `gorm:"size:64;not null"`
	Status       string    `gorm:"size:16;not null"`
	RefundStatus string    `gorm:"size:16;not null"`
	CreatedAt    time.Time `gorm:"not null;index:orders_site_created,priority:2"`
}

// OrderItem is one line of an order.
type OrderItem struct {
	ID         int64     `gorm:"primaryKey;autoIncrement"`
	SiteID     tenant.ID `gorm:"not null"`
	OrderID    int64     `gorm:"not null;index"`
	Kind       string    `gorm:"size:32;not null"`
	ItemID     int64     `gorm:"not null"`
	Title      string    `gorm:"size:300;not null"`
	PriceCents int64     `gorm:"not null"`
}

// TableName keeps the table name singular, as the data model names it.
func (LectureProgress) TableName() string { return "lecture_progress" }
