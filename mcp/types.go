package mcp

// Inputs and outputs of the tools. Their JSON Schemas are inferred from
// these types (jsonschema tags are the property descriptions a model
// reads) and then bounded in registry.go. Times are RFC 3339 strings in UTC;
// prices are in minor units of their ISO 4217 currency, with a formatted
// copy for people. Lists are never null.

// PageInput is the paging of a list tool.
type PageInput struct {
	Limit  int    `json:"limit,omitempty" jsonschema:"how many items to return, 1 to 50 (default 20)"`
	Cursor string `json:"cursor,omitempty" jsonschema:"the next_cursor of the previous answer, to continue the list; omit for the first page"`
}

// Money is a price in three forms.
type Money struct {
	PriceCents int64  `json:"price_cents" jsonschema:"the price in minor units of the currency (cents)"`
	Currency   string `json:"currency" jsonschema:"ISO 4217 currency code"`
	Price      string `json:"price" jsonschema:"the price for people, e.g. 49.00 USD, or Free"`
}

// SearchCoursesInput is the input of search_courses.
type SearchCoursesInput struct {
	Query    string `json:"query,omitempty" jsonschema:"words to look for in course titles, subtitles and descriptions (case-insensitive); omit to list every course"`
	Category string `json:"category,omitempty" jsonschema:"only courses of this category (exact name, case-insensitive; categories lists them)"`
	PageInput
}

// CourseSummary is a published course in a list.
type CourseSummary struct {
	Slug     string `json:"slug" jsonschema:"the course's identifier, for get_course"`
	Title    string `json:"title"`
	Subtitle string `json:"subtitle"`
	Category string `json:"category"`
	Money
	URL string `json:"url" jsonschema:"the course's Markdown page"`
}

// SearchCoursesOutput is the output of search_courses.
type SearchCoursesOutput struct {
	Courses    []CourseSummary `json:"courses"`
	Total      int             `json:"total" jsonschema:"how many published courses match, over all pages"`
	NextCursor string          `json:"next_cursor,omitempty" jsonschema:"pass as cursor for the next page; absent on the last page"`
	Categories []string        `json:"categories" jsonschema:"every category of the site's published courses"`
}

// GetCourseInput is the input of get_course.
type GetCourseInput struct {
	Slug string `json:"slug" jsonschema:"the course's slug, as search_courses returns it"`
}

// LecturerOutput is a lecturer of a course.
type LecturerOutput struct {
	Name string `json:"name"`
	Bio  string `json:"bio"`
}

// LectureOutput is a published lecture in a course outline.
type LectureOutput struct {
	Title           string `json:"title"`
	DurationSeconds int    `json:"duration_seconds"`
	FreePreview     bool   `json:"free_preview" jsonschema:"true when anyone may watch it without buying the course"`
}

// SectionOutput is a section of a course outline.
type SectionOutput struct {
	Title    string          `json:"title"`
	Lectures []LectureOutput `json:"lectures"`
}

// CourseOutput is the output of get_course.
type CourseOutput struct {
	CourseSummary
	Description          string           `json:"description"`
	Lecturers            []LecturerOutput `json:"lecturers"`
	Sections             []SectionOutput  `json:"sections" jsonschema:"the curriculum outline: sections with their published lectures, in order"`
	LectureCount         int              `json:"lecture_count"`
	TotalDurationSeconds int              `json:"total_duration_seconds"`
}

// ListEventsInput is the input of list_events.
type ListEventsInput struct {
	PageInput
}

// EventOutput is an upcoming public event.
type EventOutput struct {
	Slug        string `json:"slug"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Location    string `json:"location"`
	StartsAt    string `json:"starts_at"`
	EndsAt      string `json:"ends_at"`
	Capacity    int    `json:"capacity" jsonschema:"how many people may attend; 0 when unlimited"`
	Money
}

// ListEventsOutput is the output of list_events.
type ListEventsOutput struct {
	Events     []EventOutput `json:"events" jsonschema:"upcoming public events, soonest first"`
	Total      int           `json:"total"`
	NextCursor string        `json:"next_cursor,omitempty"`
}

// NoInput is the input of tools that take no arguments.
type NoInput struct{}

// PlanOutput is a membership plan.
type PlanOutput struct {
	Slug        string `json:"slug"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Interval    string `json:"interval" jsonschema:"how often it is billed: month, year, ..."`
	Money
}

// ProductOutput is a digital product.
type ProductOutput struct {
	Slug        string `json:"slug"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Money
}

// ConsultingOutput is a consulting service.
type ConsultingOutput struct {
	Slug        string `json:"slug"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Sessions    int    `json:"sessions" jsonschema:"sessions included"`
	Money
}

// PricingOutput is the output of get_pricing.
type PricingOutput struct {
	Courses            []CourseSummary    `json:"courses"`
	MembershipPlans    []PlanOutput       `json:"membership_plans"`
	DigitalProducts    []ProductOutput    `json:"digital_products"`
	ConsultingServices []ConsultingOutput `json:"consulting_services"`
	Events             []EventOutput      `json:"events" jsonschema:"upcoming public events"`
	Truncated          bool               `json:"truncated" jsonschema:"true when a list was cut at 50 items; pricing_url has everything"`
	PricingURL         string             `json:"pricing_url" jsonschema:"the full price list as Markdown"`
}

// SiteLinks are the site's documents and endpoints for agents.
type SiteLinks struct {
	LLMSTxt                     string `json:"llms_txt"`
	AuthMD                      string `json:"auth_md" jsonschema:"how to sign in (OAuth 2.0 with PKCE), step by step"`
	PricingMD                   string `json:"pricing_md"`
	OpenAPI                     string `json:"openapi"`
	MCP                         string `json:"mcp"`
	ProtectedResourceMetadata   string `json:"protected_resource_metadata"`
	AuthorizationServerMetadata string `json:"authorization_server_metadata"`
}

// AccessOutput says what the caller may do here.
type AccessOutput struct {
	SignedIn bool     `json:"signed_in"`
	Scopes   []string `json:"scopes" jsonschema:"the token's scopes that are in effect"`
	Tools    []string `json:"tools" jsonschema:"the tools this caller may use"`
}

// SiteInfoOutput is the output of get_site_info.
type SiteInfoOutput struct {
	Name             string       `json:"name"`
	Description      string       `json:"description"`
	Origin           string       `json:"origin"`
	Locale           string       `json:"locale"`
	PublishedCourses int          `json:"published_courses"`
	Categories       []string     `json:"categories"`
	Registration     string       `json:"registration" jsonschema:"how a client gets a client_id at this site"`
	Links            SiteLinks    `json:"links"`
	Access           AccessOutput `json:"access"`
}

// LastWatchedOutput is a member's most recent playback position in a
// course.
type LastWatchedOutput struct {
	LectureID       int64  `json:"lecture_id"`
	PositionSeconds int    `json:"position_seconds"`
	Completed       bool   `json:"completed"`
	UpdatedAt       string `json:"updated_at"`
}

// EnrollmentOutput is one of the member's enrollments.
type EnrollmentOutput struct {
	CourseSlug        string             `json:"course_slug"`
	CourseTitle       string             `json:"course_title"`
	EnrolledAt        string             `json:"enrolled_at"`
	ExpiresAt         string             `json:"expires_at,omitempty" jsonschema:"when access ends; absent with lifetime access"`
	HasLifetimeAccess bool               `json:"has_lifetime_access"`
	AccessActive      bool               `json:"access_active" jsonschema:"false once access has expired"`
	LastWatched       *LastWatchedOutput `json:"last_watched,omitempty" jsonschema:"the most recent playback position; absent when nothing was watched"`
}

// MyEnrollmentsOutput is the output of my_enrollments.
type MyEnrollmentsOutput struct {
	Enrollments []EnrollmentOutput `json:"enrollments"`
	Total       int                `json:"total"`
	NextCursor  string             `json:"next_cursor,omitempty"`
}

// CourseProgressInput is the input of my_course_progress.
type CourseProgressInput struct {
	CourseSlug string `json:"course_slug" jsonschema:"the slug of a course the member is enrolled in (my_enrollments lists them)"`
}

// LectureProgressOutput is the member's last watched lecture of a course.
type LectureProgressOutput struct {
	LectureID       int64  `json:"lecture_id"`
	LectureTitle    string `json:"lecture_title,omitempty"`
	SectionTitle    string `json:"section_title,omitempty"`
	PositionSeconds int    `json:"position_seconds" jsonschema:"where playback stopped"`
	DurationSeconds int    `json:"duration_seconds,omitempty" jsonschema:"the lecture's length"`
	Completed       bool   `json:"completed"`
	UpdatedAt       string `json:"updated_at"`
}

// CourseProgressOutput is the output of my_course_progress.
type CourseProgressOutput struct {
	CourseSlug           string                 `json:"course_slug"`
	CourseTitle          string                 `json:"course_title"`
	EnrolledAt           string                 `json:"enrolled_at"`
	ExpiresAt            string                 `json:"expires_at,omitempty"`
	HasLifetimeAccess    bool                   `json:"has_lifetime_access"`
	AccessActive         bool                   `json:"access_active"`
	PublishedLectures    int                    `json:"published_lectures"`
	TotalDurationSeconds int                    `json:"total_duration_seconds"`
	CompletedLectures    int                    `json:"completed_lectures" jsonschema:"published lectures the member completed"`
	PercentComplete      int                    `json:"percent_complete" jsonschema:"completed_lectures as a whole percentage of published_lectures"`
	LastWatched          *LectureProgressOutput `json:"last_watched,omitempty" jsonschema:"where to resume; absent when nothing was watched"`
	NextLecture          *NextLectureOutput     `json:"next_lecture,omitempty" jsonschema:"the first published lecture, in curriculum order, not completed yet; absent when every one is"`
}

// NextLectureOutput is a lecture the member has not completed.
type NextLectureOutput struct {
	LectureID       int64  `json:"lecture_id"`
	LectureTitle    string `json:"lecture_title"`
	SectionTitle    string `json:"section_title"`
	DurationSeconds int    `json:"duration_seconds"`
	PositionSeconds int    `json:"position_seconds" jsonschema:"where playback stopped, 0 when not started"`
}

// MyPurchasesInput is the input of my_purchases.
type MyPurchasesInput struct {
	Kind string `json:"kind,omitempty" jsonschema:"one kind of purchase to page through; omit for the first page of every kind"`
	PageInput
}

// ProductPurchaseOutput is a bought digital product.
type ProductPurchaseOutput struct {
	ID          int64  `json:"id"`
	Slug        string `json:"slug"`
	Title       string `json:"title"`
	PurchasedAt string `json:"purchased_at"`
}

// ConsultingPurchaseOutput is a bought consulting service and its use.
type ConsultingPurchaseOutput struct {
	ID               int64  `json:"id"`
	Slug             string `json:"slug"`
	Title            string `json:"title"`
	PurchasedAt      string `json:"purchased_at"`
	SessionsIncluded int    `json:"sessions_included"`
	SessionsUsed     int    `json:"sessions_used"`
}

// EventRegistrationOutput is a registration for an event.
type EventRegistrationOutput struct {
	ID           int64  `json:"id"`
	EventSlug    string `json:"event_slug"`
	Title        string `json:"title"`
	StartsAt     string `json:"starts_at"`
	EndsAt       string `json:"ends_at"`
	RegisteredAt string `json:"registered_at"`
}

// ProductPurchases is a page of digital product purchases.
type ProductPurchases struct {
	Items      []ProductPurchaseOutput `json:"items"`
	Total      int                     `json:"total"`
	NextCursor string                  `json:"next_cursor,omitempty"`
}

// ConsultingPurchases is a page of consulting purchases.
type ConsultingPurchases struct {
	Items      []ConsultingPurchaseOutput `json:"items"`
	Total      int                        `json:"total"`
	NextCursor string                     `json:"next_cursor,omitempty"`
}

// EventRegistrations is a page of event registrations.
type EventRegistrations struct {
	Items      []EventRegistrationOutput `json:"items"`
	Total      int                       `json:"total"`
	NextCursor string                    `json:"next_cursor,omitempty"`
}

// MyPurchasesOutput is the output of my_purchases: what the member bought,
// never order numbers, coupons, refunds or invoices.
type MyPurchasesOutput struct {
	DigitalProducts    *ProductPurchases    `json:"digital_products,omitempty"`
	ConsultingServices *ConsultingPurchases `json:"consulting_services,omitempty"`
	EventRegistrations *EventRegistrations  `json:"event_registrations,omitempty"`
}

// MyNotificationsInput is the input of my_notifications.
type MyNotificationsInput struct {
	UnreadOnly bool `json:"unread_only,omitempty" jsonschema:"list unread notifications only"`
	PageInput
}

// NotificationOutput is a notification.
type NotificationOutput struct {
	ID        int64  `json:"id" jsonschema:"for mark_notification_read"`
	Kind      string `json:"kind"`
	Title     string `json:"title"`
	Body      string `json:"body"`
	URL       string `json:"url"`
	CreatedAt string `json:"created_at"`
	Read      bool   `json:"read"`
	ReadAt    string `json:"read_at,omitempty"`
}

// MyNotificationsOutput is the output of my_notifications.
type MyNotificationsOutput struct {
	Notifications []NotificationOutput `json:"notifications" jsonschema:"newest first"`
	Total         int                  `json:"total"`
	UnreadCount   int                  `json:"unread_count"`
	NextCursor    string               `json:"next_cursor,omitempty"`
}

// MarkNotificationReadInput is the input of mark_notification_read.
type MarkNotificationReadInput struct {
	ID int64 `json:"id" jsonschema:"the notification's id, from my_notifications"`
}

// MarkNotificationReadOutput is the output of mark_notification_read.
type MarkNotificationReadOutput struct {
	Notification NotificationOutput `json:"notification"`
	UnreadCount  int                `json:"unread_count"`
}

// ListCoursesInput is the input of list_courses.
type ListCoursesInput struct {
	IncludeDrafts bool `json:"include_drafts,omitempty" jsonschema:"include unpublished drafts (default true)"`
	PageInput
}

// OperatorCourseOutput is a course as operators see it.
type OperatorCourseOutput struct {
	ID          int64  `json:"id"`
	Slug        string `json:"slug"`
	Title       string `json:"title"`
	Category    string `json:"category"`
	Status      string `json:"status" jsonschema:"draft or published"`
	PublishedAt string `json:"published_at,omitempty"`
	UpdatedAt   string `json:"updated_at"`
	Money
}

// ListCoursesOutput is the output of list_courses.
type ListCoursesOutput struct {
	Courses    []OperatorCourseOutput `json:"courses"`
	Total      int                    `json:"total"`
	NextCursor string                 `json:"next_cursor,omitempty"`
}

// ListStudentsInput is the input of list_students.
type ListStudentsInput struct {
	Search string `json:"search,omitempty" jsonschema:"part of a student's e-mail address or name"`
	PageInput
}

// StudentOutput is a student of the site.
type StudentOutput struct {
	UserID      string `json:"user_id"`
	Email       string `json:"email"`
	Name        string `json:"name"`
	Enrollments int    `json:"enrollments" jsonschema:"courses the student is enrolled in"`
	Since       string `json:"since" jsonschema:"when the student joined the site"`
}

// ListStudentsOutput is the output of list_students.
type ListStudentsOutput struct {
	Students   []StudentOutput `json:"students" jsonschema:"by e-mail address"`
	Total      int             `json:"total"`
	NextCursor string          `json:"next_cursor,omitempty"`
}

// RecentOrdersInput is the input of recent_orders.
type RecentOrdersInput struct {
	PageInput
}

// OrderItemOutput is a line of an order.
type OrderItemOutput struct {
	Kind  string `json:"kind" jsonschema:"course, digital_product, consulting_service, event or membership_plan"`
	Title string `json:"title"`
	Money
}

// OrderOutput is an order as operators see it.
type OrderOutput struct {
	Number        string            `json:"number"`
	CustomerEmail string            `json:"customer_email"`
	Status        string            `json:"status"`
	RefundStatus  string            `json:"refund_status" jsonschema:"none, partial or full"`
	CouponCode    string            `json:"coupon_code,omitempty"`
	TotalCents    int64             `json:"total_cents"`
	Currency      string            `json:"currency"`
	Total         string            `json:"total"`
	CreatedAt     string            `json:"created_at"`
	Items         []OrderItemOutput `json:"items"`
}

// RecentOrdersOutput is the output of recent_orders.
type RecentOrdersOutput struct {
	Orders     []OrderOutput `json:"orders" jsonschema:"newest first"`
	Total      int           `json:"total"`
	NextCursor string        `json:"next_cursor,omitempty"`
}

// SalesSummaryInput is the input of sales_summary.
type SalesSummaryInput struct {
	Days int `json:"days,omitempty" jsonschema:"the period: the last this many days, up to now (1 to 366, default 30)"`
}

// SalesSummaryOutput is the output of sales_summary.
type SalesSummaryOutput struct {
	From           string `json:"from"`
	To             string `json:"to"`
	Orders         int    `json:"orders"`
	RevenueCents   int64  `json:"revenue_cents" jsonschema:"paid orders' totals in minor units"`
	Revenue        string `json:"revenue" jsonschema:"the revenue as an amount, e.g. 0.00 USD"`
	Currency       string `json:"currency,omitempty" jsonschema:"the orders' currency (without orders, the catalog's); absent when they use several"`
	RefundedOrders int    `json:"refunded_orders"`
	NewEnrollments int    `json:"new_enrollments"`
}
