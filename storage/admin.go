package storage

import (
	"context"
	"time"

	"github.com/lectern/lectern/tenant"
)

// Records is the operators' access to one kind of site-owned record with an
// int64 ID (courses, coupons, posts, ...). Every method takes the site: a
// record of another site is ErrNotFound, and Create and Update write the
// given site's ID into the record whatever it held, so no call can create or
// move a row into another site.
type Records[T any] interface {
	// Create inserts rec, setting its ID (and CreatedAt/UpdatedAt when it has
	// them). A taken unique value (slug, code) is ErrConflict.
	Create(ctx context.Context, site tenant.ID, rec *T) error
	// Get returns the record with id.
	Get(ctx context.Context, site tenant.ID, id int64) (*T, error)
	// Update rewrites every column of the record named by rec's ID except its
	// ID, site and CreatedAt, and sets UpdatedAt when it has one.
	Update(ctx context.Context, site tenant.ID, rec *T) error
	// Delete removes the record with id (rows that belong to it go with it:
	// a section's lectures, a course's sections, a form's submissions).
	Delete(ctx context.Context, site tenant.ID, id int64) error
	// List returns up to p.Limit records with ID > p.After in ID order, and
	// how many records match in all. Each Match narrows the list.
	List(ctx context.Context, site tenant.ID, p Page, match ...Match) ([]T, int, error)
}

// Match restricts a list to records whose Field (the Go field name, e.g.
// "CourseID") equals Value. An unknown field is an error, never ignored.
type Match struct {
	Field string
	Value any
}

// Subscription states.
const (
	SubscriptionActive   = "active"
	SubscriptionPastDue  = "past_due"
	SubscriptionCanceled = "canceled"
)

// Coupon is a discount code of a site. Codes are stored upper-case and are
// unique per site. Exactly one of PercentOff and AmountOffCents is set.
type Coupon struct {
	ID             int64 `gorm:"primaryKey;autoIncrement"`
	SiteID         tenant.ID
	Code           string
	Description    string
	PercentOff     int
	AmountOffCents int64
	Currency       string
	MaxRedemptions int // 0: unlimited
	Redemptions    int
	ExpiresAt      *time.Time
	Active         bool
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// Post is a blog post or announcement of a site.
type Post struct {
	ID          int64 `gorm:"primaryKey;autoIncrement"`
	SiteID      tenant.ID
	Slug        string
	Title       string
	Body        string
	Status      string
	AuthorID    string
	PublishedAt *time.Time
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// SitePage is a static page of a site (about, imprint, ...).
type SitePage struct {
	ID        int64 `gorm:"primaryKey;autoIncrement"`
	SiteID    tenant.ID
	Slug      string
	Title     string
	Body      string
	Status    string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Comment is a member's comment on a lecture, a course or a post. The admin
// API only reads them.
type Comment struct {
	ID        int64 `gorm:"primaryKey;autoIncrement"`
	SiteID    tenant.ID
	UserID    string
	CourseID  *int64
	LectureID *int64
	PostID    *int64
	Body      string
	CreatedAt time.Time
}

// FormField describes one input of a form.
type FormField struct {
	Name     string `json:"name"`
	Label    string `json:"label"`
	Type     string `json:"type"`
	Required bool   `json:"required"`
}

// Form is a form a site shows (contact, waitlist, survey).
type Form struct {
	ID        int64 `gorm:"primaryKey;autoIncrement"`
	SiteID    tenant.ID
	Slug      string
	Title     string
	Fields    []FormField `gorm:"serializer:json"`
	CreatedAt time.Time
	UpdatedAt time.Time
}

// FormSubmission is one filled-in form; UserID is set when a signed-in
// member sent it.
type FormSubmission struct {
	ID        int64 `gorm:"primaryKey;autoIncrement"`
	SiteID    tenant.ID
	FormID    int64
	UserID    *string
	Email     string
	Data      map[string]string `gorm:"serializer:json"`
	CreatedAt time.Time
}

// File is an uploaded file. Its bytes live in a file store under Key (a
// random, unguessable name); the row records what was stored.
type File struct {
	ID          int64 `gorm:"primaryKey;autoIncrement"`
	SiteID      tenant.ID
	Key         string `gorm:"column:storage_key"`
	Name        string
	ContentType string
	SizeBytes   int64
	SHA256      string `gorm:"column:sha256"`
	CreatedBy   string
	CreatedAt   time.Time
}

// Subscription is a member's subscription to a membership plan.
type Subscription struct {
	ID                int64 `gorm:"primaryKey;autoIncrement"`
	SiteID            tenant.ID
	UserID            string
	PlanID            int64
	Status            string
	StartedAt         time.Time
	CurrentPeriodEnd  time.Time
	CancelAtPeriodEnd bool
	CanceledAt        *time.Time
	CreatedAt         time.Time
	UpdatedAt         time.Time
}

// Appearance is a site's theme: colours as #rrggbb and an optional logo
// (an uploaded File).
type Appearance struct {
	SiteID          tenant.ID `gorm:"primaryKey;autoIncrement:false"`
	PrimaryColor    string
	AccentColor     string
	BackgroundColor string
	TextColor       string
	LogoFileID      *int64
	UpdatedAt       time.Time
}

// TableName keeps the table name as the data model names it.
func (Appearance) TableName() string { return "appearance" }

// TableName is "pages": the record is a page of the site.
func (SitePage) TableName() string { return "pages" }

// DefaultAppearance is the theme of a site that never set one.
func DefaultAppearance(site tenant.ID) *Appearance {
	return &Appearance{SiteID: site, PrimaryColor: "#1f6feb", AccentColor: "#f2a900", BackgroundColor: "#ffffff", TextColor: "#1b1f24"}
}

// MemberView is a person with roles at a site.
type MemberView struct {
	UserID string
	Email  string
	Name   string
	Roles  []string `gorm:"-"`
	Since  time.Time
}

// CourseEnrollments counts a course's new enrollments in a period.
type CourseEnrollments struct {
	CourseID    int64
	Slug        string
	Title       string
	Enrollments int
}

// PositionOrder is the new order of a course's curriculum: each section in
// turn, with its lectures in turn. Lectures may move between sections.
type PositionOrder struct {
	SectionID  int64
	LectureIDs []int64
}

// AdminStore is what the operators' API reads and writes beyond the member,
// catalog and operator reads. Each Records accessor is one kind of record;
// the methods below it are what does not fit that shape.
type AdminStore interface {
	CourseRecords() Records[Course]
	SectionRecords() Records[Section]
	LectureRecords() Records[Lecture]
	EnrollmentRecords() Records[Enrollment]
	EventRecords() Records[Event]
	MembershipPlanRecords() Records[MembershipPlan]
	DigitalProductRecords() Records[DigitalProduct]
	LecturerRecords() Records[Lecturer]
	CouponRecords() Records[Coupon]
	PostRecords() Records[Post]
	PageRecords() Records[SitePage]
	CommentRecords() Records[Comment]
	FormRecords() Records[Form]
	FormSubmissionRecords() Records[FormSubmission]
	FileRecords() Records[File]
	SubscriptionRecords() Records[Subscription]
	EventRegistrationRecords() Records[EventRegistration]
	DigitalProductPurchaseRecords() Records[DigitalProductPurchase]

	// Curriculum returns every section of a course with every lecture
	// (drafts too), in position order. An unknown course is ErrNotFound.
	Curriculum(ctx context.Context, site tenant.ID, courseID int64) ([]SectionOutline, error)
	// ReorderCurriculum sets the positions of the course's sections and
	// lectures (and the section of each lecture) in one transaction. Every
	// ID must be the course's; any other is ErrNotFound and nothing changes.
	ReorderCurriculum(ctx context.Context, site tenant.ID, courseID int64, order []PositionOrder) error
	// ListMembers returns the people holding a role at the site (of one
	// role when role != ""), ordered by e-mail; Page.After is an offset.
	ListMembers(ctx context.Context, site tenant.ID, role string, p Page) ([]MemberView, int, error)
	// OrderByID returns one order with its items and customer.
	OrderByID(ctx context.Context, site tenant.ID, id int64) (*OrderView, error)
	// EnrollmentSummary counts enrollments created in [from, to) per course,
	// most first.
	EnrollmentSummary(ctx context.Context, site tenant.ID, from, to time.Time) ([]CourseEnrollments, error)
	// Appearance returns the site's theme, or ErrNotFound if it never set one.
	Appearance(ctx context.Context, site tenant.ID) (*Appearance, error)
	// SaveAppearance creates or replaces the site's theme.
	SaveAppearance(ctx context.Context, a *Appearance) error
}
