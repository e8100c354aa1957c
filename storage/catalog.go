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
	ID          int64 `gorm:"primaryKey;autoIncrement"`
	SiteID      tenant.ID
	Slug        string
	Title       string
	Subtitle    string
	Description string
	Category    string
	PriceCents  int64
	Currency    string
	Status      string
	ImageURL    string
	PublishedAt *time.Time
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// Lecturer teaches courses at a site; UserID links a person when known.
type Lecturer struct {
	ID        int64 `gorm:"primaryKey;autoIncrement"`
	SiteID    tenant.ID
	Slug      string
	Name      string
	Bio       string
	UserID    *string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// CourseLecturer links a lecturer to a course, in display order.
type CourseLecturer struct {
	SiteID     tenant.ID
	CourseID   int64 `gorm:"primaryKey"`
	LecturerID int64 `gorm:"primaryKey"`
	Position   int
}

// Section groups lectures of a course.
type Section struct {
	ID       int64 `gorm:"primaryKey;autoIncrement"`
	SiteID   tenant.ID
	CourseID int64
	Title    string
	Position int
}

// Lecture is one lesson. FreePreview lectures may be watched by anyone;
// every published lecture's title is part of the public outline.
type Lecture struct {
	ID              int64 `gorm:"primaryKey;autoIncrement"`
	SiteID          tenant.ID
	CourseID        int64
	SectionID       int64
	Title           string
	Position        int
	DurationSeconds int
	FreePreview     bool
	Status          string
}

// Enrollment gives a user access to a course until ExpiresAt (nil: lifetime).
type Enrollment struct {
	ID         int64 `gorm:"primaryKey;autoIncrement"`
	SiteID     tenant.ID
	UserID     string
	CourseID   int64
	EnrolledAt time.Time
	ExpiresAt  *time.Time
}

// LectureProgress is a user's playback position in a lecture.
type LectureProgress struct {
	ID              int64 `gorm:"primaryKey;autoIncrement"`
	SiteID          tenant.ID
	UserID          string
	LectureID       int64
	CourseID        int64
	PositionSeconds int
	Completed       bool
	UpdatedAt       time.Time
}

// DigitalProduct is a downloadable product.
type DigitalProduct struct {
	ID          int64 `gorm:"primaryKey;autoIncrement"`
	SiteID      tenant.ID
	Slug        string
	Title       string
	Description string
	PriceCents  int64
	Currency    string
	Status      string
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// DigitalProductPurchase records that a user bought a digital product.
type DigitalProductPurchase struct {
	ID          int64 `gorm:"primaryKey;autoIncrement"`
	SiteID      tenant.ID
	UserID      string
	ProductID   int64
	OrderID     *int64
	PurchasedAt time.Time
}

// ConsultingService is a bookable block of consulting sessions.
type ConsultingService struct {
	ID          int64 `gorm:"primaryKey;autoIncrement"`
	SiteID      tenant.ID
	Slug        string
	Title       string
	Description string
	PriceCents  int64
	Currency    string
	Sessions    int
	Status      string
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// ConsultingPurchase records a bought consulting service and its usage.
type ConsultingPurchase struct {
	ID               int64 `gorm:"primaryKey;autoIncrement"`
	SiteID           tenant.ID
	UserID           string
	ServiceID        int64
	OrderID          *int64
	SessionsIncluded int
	SessionsUsed     int
	PurchasedAt      time.Time
}

// Event is a live event (webinar, workshop) at a site.
type Event struct {
	ID          int64 `gorm:"primaryKey;autoIncrement"`
	SiteID      tenant.ID
	Slug        string
	Title       string
	Description string
	Location    string
	StartsAt    time.Time
	EndsAt      time.Time
	PriceCents  int64
	Currency    string
	Capacity    int
	Public      bool
	Status      string
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// EventRegistration records that a user registered for an event.
type EventRegistration struct {
	ID           int64 `gorm:"primaryKey;autoIncrement"`
	SiteID       tenant.ID
	UserID       string
	EventID      int64
	OrderID      *int64
	RegisteredAt time.Time
}

// Notification is a message to one user at one site.
type Notification struct {
	ID        int64 `gorm:"primaryKey;autoIncrement"`
	SiteID    tenant.ID
	UserID    string
	Kind      string
	Title     string
	Body      string
	URL       string `gorm:"column:url"`
	CreatedAt time.Time
	ReadAt    *time.Time
}

// NotificationSubscription is whether a user receives a topic on a channel.
type NotificationSubscription struct {
	SiteID    tenant.ID `gorm:"primaryKey"`
	UserID    string    `gorm:"primaryKey"`
	Topic     string    `gorm:"primaryKey"`
	Channel   string    `gorm:"primaryKey"`
	Enabled   bool
	UpdatedAt time.Time
}

// MembershipPlan is a recurring plan that grants access to the site.
type MembershipPlan struct {
	ID          int64 `gorm:"primaryKey;autoIncrement"`
	SiteID      tenant.ID
	Slug        string
	Title       string
	Description string
	PriceCents  int64
	Currency    string
	Interval    string
	Status      string
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// Order is a purchase, with the details operators see and members never do
// (number, coupon, refund status).
type Order struct {
	ID           int64 `gorm:"primaryKey;autoIncrement"`
	SiteID       tenant.ID
	Number       string
	UserID       string
	TotalCents   int64
	Currency     string
	CouponCode   string
	Status       string
	RefundStatus string
	CreatedAt    time.Time
}

// OrderItem is one line of an order.
type OrderItem struct {
	ID         int64 `gorm:"primaryKey;autoIncrement"`
	SiteID     tenant.ID
	OrderID    int64
	Kind       string
	ItemID     int64
	Title      string
	PriceCents int64
}

// TableName keeps the table name singular, as the data model names it.
func (LectureProgress) TableName() string { return "lecture_progress" }
