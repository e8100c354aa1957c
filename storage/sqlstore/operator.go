package sqlstore

import (
	"context"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// ListCourses implements storage.OperatorStore.
func (s *Store) ListCourses(ctx context.Context, site tenant.ID, includeDrafts bool, p storage.Page) ([]storage.Course, int, error) {
	base := s.db.WithContext(ctx).Model(&storage.Course{}).Scopes(siteScope(site))
	if !includeDrafts {
		base = base.Scopes(published)
	}
	var rows []storage.Course
	if err := base.Session(&gormSession).Scopes(afterID(p.After)).Limit(limitOf(p)).Find(&rows).Error; err != nil {
		return nil, 0, mapErr(err)
	}
	var n int64
	if err := base.Session(&gormSession).Count(&n).Error; err != nil {
		return nil, 0, mapErr(err)
	}
	return rows, int(n), nil
}

// ListStudents implements storage.OperatorStore. User IDs are not ordered,
// so Page.After is an offset here: the number of students already listed.
func (s *Store) ListStudents(ctx context.Context, site tenant.ID, search string, p storage.Page) ([]storage.StudentView, int, error) {
	base := s.db.WithContext(ctx).Table("site_roles").
		Joins("JOIN users ON users.id = site_roles.user_id").
		Scopes(siteScope(site)).Where("site_roles.role = ?", storage.RoleStudent)
	if unmatchable(search) {
		return []storage.StudentView{}, 0, nil
	}
	if t := strings.TrimSpace(search); t != "" {
		pat := likePattern(t)
		base = base.Where(`(LOWER(users.email) LIKE ? ESCAPE '\' OR LOWER(users.name) LIKE ? ESCAPE '\')`, pat, pat)
	}
	var rows []storage.StudentView
	err := base.Session(&gormSession).
		Select("users.id AS user_id, users.email, users.name, site_roles.created_at AS since, " +
			"(SELECT COUNT(*) FROM enrollments e WHERE e.site_id = site_roles.site_id AND e.user_id = users.id) AS enrollments").
		Order("users.email").Offset(int(p.After)).Limit(limitOf(p)).Find(&rows).Error
	if err != nil {
		return nil, 0, mapErr(err)
	}
	var n int64
	if err := base.Session(&gormSession).Count(&n).Error; err != nil {
		return nil, 0, mapErr(err)
	}
	return rows, int(n), nil
}

// RecentOrders implements storage.OperatorStore.
func (s *Store) RecentOrders(ctx context.Context, site tenant.ID, p storage.Page) ([]storage.OrderView, int, error) {
	db := s.db.WithContext(ctx)
	q := db.Table("orders").Select("orders.*, users.email AS customer_email").
		Joins("LEFT JOIN users ON users.id = orders.user_id").Scopes(siteScope(site))
	if p.After > 0 {
		q = q.Where("orders.id < ?", p.After)
	}
	var rows []storage.OrderView
	if err := q.Order("orders.id DESC").Limit(limitOf(p)).Find(&rows).Error; err != nil {
		return nil, 0, mapErr(err)
	}
	if len(rows) > 0 {
		ids := make([]int64, len(rows))
		byID := make(map[int64]*storage.OrderView, len(rows))
		for i := range rows {
			ids[i] = rows[i].ID
			byID[rows[i].ID] = &rows[i]
		}
		var items []storage.OrderItem
		if err := db.Scopes(siteScope(site)).Where("order_id IN ?", ids).Order("id").Find(&items).Error; err != nil {
			return nil, 0, mapErr(err)
		}
		for _, it := range items {
			byID[it.OrderID].Items = append(byID[it.OrderID].Items, it)
		}
	}
	var n int64
	if err := db.Model(&storage.Order{}).Scopes(siteScope(site)).Count(&n).Error; err != nil {
		return nil, 0, mapErr(err)
	}
	return rows, int(n), nil
}

// SalesSummary implements storage.OperatorStore: orders created in [from, to).
func (s *Store) SalesSummary(ctx context.Context, site tenant.ID, from, to time.Time) (*storage.SalesSummary, error) {
	db := s.db.WithContext(ctx)
	from, to = from.UTC(), to.UTC()
	sum := &storage.SalesSummary{From: from, To: to}
	var agg struct {
		Orders   int64
		Revenue  int64
		Refunded int64
	}
	err := db.Model(&storage.Order{}).Scopes(siteScope(site)).Where("created_at >= ? AND created_at < ?", from, to).
		Select("COUNT(*) AS orders, COALESCE(SUM(CASE WHEN status = 'paid' THEN total_cents ELSE 0 END), 0) AS revenue, " +
			"COALESCE(SUM(CASE WHEN refund_status <> 'none' THEN 1 ELSE 0 END), 0) AS refunded").Find(&agg).Error
	if err != nil {
		return nil, mapErr(err)
	}
	sum.Orders, sum.RevenueCents, sum.RefundedOrders = int(agg.Orders), agg.Revenue, int(agg.Refunded)
	var currency []string
	if err := db.Model(&storage.Order{}).Scopes(siteScope(site)).Where("created_at >= ? AND created_at < ?", from, to).
		Distinct("currency").Pluck("currency", &currency).Error; err != nil {
		return nil, mapErr(err)
	}
	if len(currency) == 1 {
		sum.Currency = currency[0]
	}
	var enr int64
	if err := db.Model(&storage.Enrollment{}).Scopes(siteScope(site)).Where("enrolled_at >= ? AND enrolled_at < ?", from, to).Count(&enr).Error; err != nil {
		return nil, mapErr(err)
	}
	sum.NewEnrollments = int(enr)
	return sum, nil
}

// gormSession starts a new statement from a prepared base query, so one
// base can serve both the page and the count.
var gormSession = gorm.Session{}
