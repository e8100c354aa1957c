package sqlstore

import (
	"context"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// defaultPageSize applies when a Page asks for no limit.
const defaultPageSize = 20

func limitOf(p storage.Page) int {
	if p.Limit <= 0 {
		return defaultPageSize
	}
	return p.Limit
}

// ofUser restricts a member query to the user's own rows.
func ofUser(userID string) func(*gorm.DB) *gorm.DB {
	return func(db *gorm.DB) *gorm.DB {
		return db.Where(clause.Eq{Column: clause.Column{Table: clause.CurrentTable, Name: "user_id"}, Value: userID})
	}
}

// afterID is keyset pagination in ascending ID order.
func afterID(after int64) func(*gorm.DB) *gorm.DB {
	return func(db *gorm.DB) *gorm.DB {
		if after > 0 {
			db = db.Where(clause.Gt{Column: clause.Column{Table: clause.CurrentTable, Name: "id"}, Value: after})
		}
		return db.Order(clause.OrderByColumn{Column: clause.Column{Table: clause.CurrentTable, Name: "id"}})
	}
}

// count counts the rows of model for the user at site.
func (s *Store) countOf(ctx context.Context, model any, site tenant.ID, userID string) (int, error) {
	var n int64
	err := s.db.WithContext(ctx).Model(model).Scopes(siteScope(site), ofUser(userID)).Count(&n).Error
	return int(n), mapErr(err)
}

// ListEnrollments implements storage.MemberStore.
func (s *Store) ListEnrollments(ctx context.Context, site tenant.ID, userID string, p storage.Page) ([]storage.EnrollmentView, int, error) {
	var rows []storage.EnrollmentView
	err := s.db.WithContext(ctx).Table("enrollments").
		Select("enrollments.id, enrollments.course_id, courses.slug AS course_slug, courses.title AS course_title, enrollments.enrolled_at, enrollments.expires_at").
		Joins("JOIN courses ON courses.id = enrollments.course_id AND courses.site_id = enrollments.site_id").
		Scopes(siteScope(site), ofUser(userID), afterID(p.After)).Limit(limitOf(p)).Find(&rows).Error
	if err != nil {
		return nil, 0, mapErr(err)
	}
	n, err := s.countOf(ctx, &storage.Enrollment{}, site, userID)
	return rows, n, err
}

// LastWatched implements storage.MemberStore: one query for all courses.
func (s *Store) LastWatched(ctx context.Context, site tenant.ID, userID string, courseIDs []int64) (map[int64]storage.LectureProgress, error) {
	out := make(map[int64]storage.LectureProgress, len(courseIDs))
	if len(courseIDs) == 0 {
		return out, nil
	}
	var rows []storage.LectureProgress
	err := s.db.WithContext(ctx).Scopes(siteScope(site), ofUser(userID)).
		Where("course_id IN ?", courseIDs).Find(&rows).Error
	if err != nil {
		return nil, mapErr(err)
	}
	for _, r := range rows {
		cur, ok := out[r.CourseID]
		if !ok || r.UpdatedAt.After(cur.UpdatedAt) || (r.UpdatedAt.Equal(cur.UpdatedAt) && r.ID > cur.ID) {
			out[r.CourseID] = r
		}
	}
	return out, nil
}

// CourseProgress implements storage.MemberStore.
func (s *Store) CourseProgress(ctx context.Context, site tenant.ID, userID string, courseID int64) ([]storage.LectureProgress, error) {
	var rows []storage.LectureProgress
	err := s.db.WithContext(ctx).Scopes(siteScope(site), ofUser(userID)).
		Where("course_id = ?", courseID).Order("updated_at DESC, id DESC").Find(&rows).Error
	return rows, mapErr(err)
}

// ListProductPurchases implements storage.MemberStore.
func (s *Store) ListProductPurchases(ctx context.Context, site tenant.ID, userID string, p storage.Page) ([]storage.ProductPurchaseView, int, error) {
	var rows []storage.ProductPurchaseView
	err := s.db.WithContext(ctx).Table("digital_product_purchases").
		Select("digital_product_purchases.id, digital_products.slug, digital_products.title, digital_product_purchases.purchased_at").
		Joins("JOIN digital_products ON digital_products.id = digital_product_purchases.product_id AND digital_products.site_id = digital_product_purchases.site_id").
		Scopes(siteScope(site), ofUser(userID), afterID(p.After)).Limit(limitOf(p)).Find(&rows).Error
	if err != nil {
		return nil, 0, mapErr(err)
	}
	n, err := s.countOf(ctx, &storage.DigitalProductPurchase{}, site, userID)
	return rows, n, err
}

// ListConsultingPurchases implements storage.MemberStore.
func (s *Store) ListConsultingPurchases(ctx context.Context, site tenant.ID, userID string, p storage.Page) ([]storage.ConsultingPurchaseView, int, error) {
	var rows []storage.ConsultingPurchaseView
	err := s.db.WithContext(ctx).Table("consulting_purchases").
		Select("consulting_purchases.id, consulting_services.slug, consulting_services.title, consulting_purchases.purchased_at, consulting_purchases.sessions_included, consulting_purchases.sessions_used").
		Joins("JOIN consulting_services ON consulting_services.id = consulting_purchases.service_id AND consulting_services.site_id = consulting_purchases.site_id").
		Scopes(siteScope(site), ofUser(userID), afterID(p.After)).Limit(limitOf(p)).Find(&rows).Error
	if err != nil {
		return nil, 0, mapErr(err)
	}
	n, err := s.countOf(ctx, &storage.ConsultingPurchase{}, site, userID)
	return rows, n, err
}

// ListEventRegistrations implements storage.MemberStore.
func (s *Store) ListEventRegistrations(ctx context.Context, site tenant.ID, userID string, p storage.Page) ([]storage.EventRegistrationView, int, error) {
	var rows []storage.EventRegistrationView
	err := s.db.WithContext(ctx).Table("event_registrations").
		Select("event_registrations.id, events.slug AS event_slug, events.title, events.starts_at, events.ends_at, event_registrations.registered_at").
		Joins("JOIN events ON events.id = event_registrations.event_id AND events.site_id = event_registrations.site_id").
		Scopes(siteScope(site), ofUser(userID), afterID(p.After)).Limit(limitOf(p)).Find(&rows).Error
	if err != nil {
		return nil, 0, mapErr(err)
	}
	n, err := s.countOf(ctx, &storage.EventRegistration{}, site, userID)
	return rows, n, err
}

// ListNotifications implements storage.MemberStore.
func (s *Store) ListNotifications(ctx context.Context, site tenant.ID, userID string, p storage.Page, unreadOnly bool) ([]storage.Notification, int, error) {
	base := func() *gorm.DB {
		q := s.db.WithContext(ctx).Model(&storage.Notification{}).Scopes(siteScope(site), ofUser(userID))
		if unreadOnly {
			q = q.Where("read_at IS NULL")
		}
		return q
	}
	q := base()
	if p.After > 0 {
		q = q.Where("id < ?", p.After)
	}
	var rows []storage.Notification
	if err := q.Order("id DESC").Limit(limitOf(p)).Find(&rows).Error; err != nil {
		return nil, 0, mapErr(err)
	}
	var n int64
	if err := base().Count(&n).Error; err != nil {
		return nil, 0, mapErr(err)
	}
	return rows, int(n), nil
}

// UnreadNotificationCount implements storage.MemberStore.
func (s *Store) UnreadNotificationCount(ctx context.Context, site tenant.ID, userID string) (int, error) {
	var n int64
	err := s.db.WithContext(ctx).Model(&storage.Notification{}).Scopes(siteScope(site), ofUser(userID)).
		Where("read_at IS NULL").Count(&n).Error
	return int(n), mapErr(err)
}

// MarkNotificationRead implements storage.MemberStore. Marking a read
// notification again keeps its first read time.
func (s *Store) MarkNotificationRead(ctx context.Context, site tenant.ID, userID string, id int64, at time.Time) (*storage.Notification, error) {
	db := s.db.WithContext(ctx)
	if err := db.Model(&storage.Notification{}).Scopes(siteScope(site), ofUser(userID)).
		Where("id = ? AND read_at IS NULL", id).Update("read_at", at.UTC()).Error; err != nil {
		return nil, mapErr(err)
	}
	var n storage.Notification
	if err := db.Scopes(siteScope(site), ofUser(userID)).Take(&n, "id = ?", id).Error; err != nil {
		return nil, mapErr(err)
	}
	return &n, nil
}

// MarkAllNotificationsRead implements storage.MemberStore.
func (s *Store) MarkAllNotificationsRead(ctx context.Context, site tenant.ID, userID string, at time.Time) (int, error) {
	res := s.db.WithContext(ctx).Model(&storage.Notification{}).Scopes(siteScope(site), ofUser(userID)).
		Where("read_at IS NULL").Update("read_at", at.UTC())
	return int(res.RowsAffected), mapErr(res.Error)
}

// ListNotificationSubscriptions implements storage.MemberStore: keyset on
// (topic, channel), the tail of the table's primary key.
func (s *Store) ListNotificationSubscriptions(ctx context.Context, site tenant.ID, userID string, p storage.SubscriptionPage) ([]storage.NotificationSubscription, int, error) {
	base := func() *gorm.DB {
		return s.db.WithContext(ctx).Model(&storage.NotificationSubscription{}).Scopes(siteScope(site), ofUser(userID))
	}
	q := base()
	if p.AfterTopic != "" {
		q = q.Where("(topic > ? OR (topic = ? AND channel > ?))", p.AfterTopic, p.AfterTopic, p.AfterChannel)
	}
	limit := p.Limit
	if limit <= 0 {
		limit = defaultPageSize
	}
	var rows []storage.NotificationSubscription
	if err := q.Order("topic, channel").Limit(limit).Find(&rows).Error; err != nil {
		return nil, 0, mapErr(err)
	}
	var n int64
	if err := base().Count(&n).Error; err != nil {
		return nil, 0, mapErr(err)
	}
	return rows, int(n), nil
}

// NotificationSubscription implements storage.MemberStore.
func (s *Store) NotificationSubscription(ctx context.Context, site tenant.ID, userID, topic, channel string) (*storage.NotificationSubscription, error) {
	var row storage.NotificationSubscription
	err := s.db.WithContext(ctx).Scopes(siteScope(site), ofUser(userID)).
		Where("topic = ? AND channel = ?", topic, channel).Take(&row).Error
	if err != nil {
		return nil, mapErr(err)
	}
	return &row, nil
}

// SetNotificationSubscription implements storage.MemberStore.
func (s *Store) SetNotificationSubscription(ctx context.Context, sub *storage.NotificationSubscription) error {
	sub.UpdatedAt = time.Now().UTC()
	return mapErr(s.db.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "site_id"}, {Name: "user_id"}, {Name: "topic"}, {Name: "channel"}},
		DoUpdates: clause.AssignmentColumns([]string{"enabled", "updated_at"}),
	}).Create(sub).Error)
}
