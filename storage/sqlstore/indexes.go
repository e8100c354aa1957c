package sqlstore

import (
	"fmt"
	"slices"
	"strings"
)

// indexNeed is an index a query relies on: for correctness (unique: an ON
// CONFLICT target, or a duplicate the code maps to storage.ErrConflict) or
// for its plan (the leading columns of some index, so a hot or per-site
// query does not scan the table). The migrations create the indexes; this
// list says which ones the code cannot do without, and CheckSchema holds
// the two together.
type indexNeed struct {
	table   string
	columns []string
	unique  bool
	partial bool // the index has a WHERE clause the query implies
	by      string
}

func (n indexNeed) check(t *dbTable) string {
	desc := fmt.Sprintf("%s (%s)", n.table, strings.Join(n.columns, ", "))
	if n.unique {
		desc = "unique " + desc
	}
	if n.partial {
		desc = "partial " + desc
	}
	if t == nil {
		return fmt.Sprintf("index %s, relied on by %s: table missing", desc, n.by)
	}
	for _, i := range t.indexes {
		if i.partial != n.partial {
			continue
		}
		if n.unique && i.unique && sameSet(i.columns, n.columns) {
			return ""
		}
		if !n.unique && len(i.columns) >= len(n.columns) && slices.Equal(i.columns[:len(n.columns)], n.columns) {
			return ""
		}
	}
	return fmt.Sprintf("index %s, relied on by %s: none in the database", desc, n.by)
}

func unique(table string, columns ...string) indexNeed {
	return indexNeed{table: table, columns: columns, unique: true}
}

func lookup(table string, columns ...string) indexNeed {
	return indexNeed{table: table, columns: columns}
}

func (n indexNeed) where() indexNeed { n.partial = true; return n }

func (n indexNeed) because(by string) indexNeed { n.by = by; return n }

// reliedIndexes: keep each entry next to the reason. Primary keys are
// checked with the models and not repeated here (refresh_tokens' is
// token_hash: RotateRefreshToken, RefreshTokenByHash).
var reliedIndexes = []indexNeed{
	// Tenancy and identity.
	unique("sites", "slug").because("CreateSite, SiteBySlug"),
	unique("sites", "origin").because("CreateSite (one site per origin)"),
	unique("site_hosts", "host").because("LookupHost (every request)"),
	lookup("site_hosts", "site_id").because("UpdateSite (replacing a site's hosts)"),
	unique("site_keys", "site_id", "kid").because("SetSiteKeyState"),
	lookup("site_keys", "rotate_at").where().because("DueSiteKeys (the rotation scheduler)"),
	lookup("site_keys", "activates_at").where().because("PendingSiteKeys (the rotation scheduler)"),
	unique("users", "email").because("CreateUser, UserByEmail"),
	unique("site_roles", "site_id", "user_id", "role").because("GrantRole (ON CONFLICT DO NOTHING)"),
	lookup("site_roles", "user_id").because("SitesOfUser, RolesAt"),

	// OAuth state on the token path.
	unique("clients", "site_id", "client_id").where().because("CreateClient, ClientByID"),
	unique("clients", "client_id").where().because("CreateVendorIntegration (platform clients), ClientByID"),
	lookup("clients", "site_id", "created_at").because("ListClients"),
	unique("vendor_integrations", "client_id").because("CreateVendorIntegration"),
	lookup("grants", "user_id", "site_id").because("ListGrants, liveGrants by user (site_id and user_id given), UserGrants (user_id: a password reset revokes every site's grants)"),
	lookup("grants", "site_id", "client_id").because("liveGrants by client"),
	lookup("grants", "site_id", "created_at").where().because("LiveGrants (grants_site_live)"),
	lookup("grants", "site_id", "revoked_at").where().because("RevokedGrants"),
	unique("consents", "site_id", "user_id", "client_id").because("SaveConsent (ON CONFLICT)"),
	unique("revoked_tokens", "site_id", "jti").because("RevokeToken (ON CONFLICT DO NOTHING), TokenRevoked"),
	lookup("revoked_tokens", "site_id", "expires_at").because("RevokedTokens"),
	lookup("audit_events", "site_id", "id").because("ListAudit"),

	// Catalog and member API.
	unique("courses", "site_id", "slug").because("CourseBySlug, creating a course"),
	unique("lecturers", "site_id", "slug").because("creating a lecturer"),
	lookup("sections", "course_id", "position").because("Curriculum"),
	lookup("lectures", "course_id", "position").because("Curriculum"),
	unique("enrollments", "site_id", "user_id", "course_id").because("enrolling (one enrollment per course)"),
	lookup("enrollments", "site_id", "course_id").because("ListStudents"),
	lookup("enrollments", "site_id", "enrolled_at").because("EnrollmentSummary, SalesSummary"),
	unique("lecture_progress", "site_id", "user_id", "lecture_id").because("saving progress (one row per lecture)"),
	lookup("lecture_progress", "site_id", "user_id", "course_id").because("LastWatched, CourseProgress"),
	lookup("digital_product_purchases", "site_id", "user_id").because("ListProductPurchases"),
	lookup("consulting_purchases", "site_id", "user_id").because("ListConsultingPurchases"),
	lookup("events", "site_id", "starts_at").because("ListUpcomingEvents"),
	unique("event_registrations", "site_id", "user_id", "event_id").because("ListEventRegistrations (one per event)"),
	lookup("notifications", "site_id", "user_id", "id").because("ListNotifications"),
	unique("notification_subscriptions", "site_id", "user_id", "topic", "channel").because("SetNotificationSubscription (ON CONFLICT), ListNotificationSubscriptions (keyset)"),
	unique("orders", "site_id", "number").because("creating an order (order numbers)"),
	lookup("orders", "site_id", "created_at").because("RecentOrders, SalesSummary"),
	lookup("order_items", "order_id").because("OrderByID, RecentOrders"),

	// Operators' API.
	unique("coupons", "site_id", "code").because("creating a coupon"),
	unique("files", "site_id", "storage_key").because("uploading a file"),
	unique("appearance", "site_id").because("SaveAppearance (ON CONFLICT (site_id))"),
	lookup("comments", "site_id", "id").because("CommentRecords"),
	lookup("form_submissions", "form_id", "id").because("FormSubmissionRecords"),
	lookup("subscriptions", "site_id", "user_id").because("SubscriptionRecords"),

	// Accounts: invitations, mailed links, the outbox.
	unique("invitations", "token_hash").because("InvitationByTokenHash"),
	unique("invitations", "site_id", "email").where().because("CreateInvitation (one pending per address), PendingInvitationByEmail"),
	lookup("invitations", "site_id", "id").because("ListInvitations"),
	unique("account_tokens", "token_hash").because("AccountTokenByHash"),
	lookup("account_tokens", "user_id", "purpose").because("ResetPassword (using up the other reset links)"),
	lookup("outbox_messages", "next_attempt_at", "id").where().because("ClaimMail"),
	lookup("outbox_messages", "sent_at").where().because("PruneMail"),
}
