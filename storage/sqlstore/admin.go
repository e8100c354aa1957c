package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

var _ storage.AdminStore = (*Store)(nil)

// records implements storage.Records for one record type. Every statement
// goes through siteScope; Create and Update overwrite the record's SiteID
// with the site they were given.
type records[T any] struct{ s *Store }

// The record types the admin API manages.
func (s *Store) CourseRecords() storage.Records[storage.Course]   { return records[storage.Course]{s} }
func (s *Store) SectionRecords() storage.Records[storage.Section] { return records[storage.Section]{s} }
func (s *Store) LectureRecords() storage.Records[storage.Lecture] { return records[storage.Lecture]{s} }
func (s *Store) EventRecords() storage.Records[storage.Event]     { return records[storage.Event]{s} }
func (s *Store) CouponRecords() storage.Records[storage.Coupon]   { return records[storage.Coupon]{s} }
func (s *Store) PostRecords() storage.Records[storage.Post]       { return records[storage.Post]{s} }
func (s *Store) PageRecords() storage.Records[storage.SitePage]   { return records[storage.SitePage]{s} }
func (s *Store) CommentRecords() storage.Records[storage.Comment] { return records[storage.Comment]{s} }
func (s *Store) FormRecords() storage.Records[storage.Form]       { return records[storage.Form]{s} }
func (s *Store) FileRecords() storage.Records[storage.File]       { return records[storage.File]{s} }

// EnrollmentRecords implements storage.AdminStore.
func (s *Store) EnrollmentRecords() storage.Records[storage.Enrollment] {
	return records[storage.Enrollment]{s}
}

// MembershipPlanRecords implements storage.AdminStore.
func (s *Store) MembershipPlanRecords() storage.Records[storage.MembershipPlan] {
	return records[storage.MembershipPlan]{s}
}

// DigitalProductRecords implements storage.AdminStore.
func (s *Store) DigitalProductRecords() storage.Records[storage.DigitalProduct] {
	return records[storage.DigitalProduct]{s}
}

// LecturerRecords implements storage.AdminStore.
func (s *Store) LecturerRecords() storage.Records[storage.Lecturer] {
	return records[storage.Lecturer]{s}
}

// FormSubmissionRecords implements storage.AdminStore.
func (s *Store) FormSubmissionRecords() storage.Records[storage.FormSubmission] {
	return records[storage.FormSubmission]{s}
}

// SubscriptionRecords implements storage.AdminStore.
func (s *Store) SubscriptionRecords() storage.Records[storage.Subscription] {
	return records[storage.Subscription]{s}
}

// EventRegistrationRecords implements storage.AdminStore.
func (s *Store) EventRegistrationRecords() storage.Records[storage.EventRegistration] {
	return records[storage.EventRegistration]{s}
}

// DigitalProductPurchaseRecords implements storage.AdminStore.
func (s *Store) DigitalProductPurchaseRecords() storage.Records[storage.DigitalProductPurchase] {
	return records[storage.DigitalProductPurchase]{s}
}

// adminErr is mapErr plus foreign-key violations, which the admin API
// answers as conflicts (a plan that subscriptions still use).
func adminErr(err error) error {
	// SQLite reports a RESTRICT action as a trigger constraint (1811), not as
	// a foreign-key one, so its message is all there is to go on.
	if errors.Is(err, gorm.ErrForeignKeyViolated) || isPgCode(err, "23503") ||
		(err != nil && strings.Contains(err.Error(), "FOREIGN KEY constraint failed")) {
		return fmt.Errorf("%w: %v", storage.ErrConflict, err)
	}
	return mapErr(err)
}

// idIs matches the current table's id column.
func idIs(id int64) clause.Expression {
	return clause.Eq{Column: clause.Column{Table: clause.CurrentTable, Name: "id"}, Value: id}
}

// prepare writes site into rec.SiteID and turns its times into UTC: SQLite
// compares times as text, so every stored time must be in one zone.
func prepare[T any](rec *T, site tenant.ID) {
	v := reflect.ValueOf(rec).Elem()
	v.FieldByName("SiteID").Set(reflect.ValueOf(site))
	for i := range v.NumField() {
		switch f := v.Field(i); f.Interface().(type) {
		case time.Time:
			if t := f.Interface().(time.Time); !t.IsZero() {
				f.Set(reflect.ValueOf(t.UTC()))
			}
		case *time.Time:
			if t := f.Interface().(*time.Time); t != nil {
				u := t.UTC()
				f.Set(reflect.ValueOf(&u))
			}
		}
	}
}

func (r records[T]) Create(ctx context.Context, site tenant.ID, rec *T) error {
	prepare(rec, site)
	reflect.ValueOf(rec).Elem().FieldByName("ID").SetInt(0)
	return adminErr(r.s.db.WithContext(ctx).Create(rec).Error)
}

func (r records[T]) Get(ctx context.Context, site tenant.ID, id int64) (*T, error) {
	rec := new(T)
	if err := r.s.db.WithContext(ctx).Scopes(siteScope(site)).Where(idIs(id)).Take(rec).Error; err != nil {
		return nil, adminErr(err)
	}
	return rec, nil
}

func (r records[T]) Update(ctx context.Context, site tenant.ID, rec *T) error {
	prepare(rec, site)
	id := reflect.ValueOf(rec).Elem().FieldByName("ID").Int()
	if id == 0 {
		return storage.ErrNotFound
	}
	res := r.s.db.WithContext(ctx).Model(rec).Scopes(siteScope(site)).Where(idIs(id)).
		Select("*").Omit("id", "site_id", "created_at").Updates(rec)
	if res.Error != nil {
		return adminErr(res.Error)
	}
	if res.RowsAffected == 0 {
		return storage.ErrNotFound
	}
	return nil
}

func (r records[T]) Delete(ctx context.Context, site tenant.ID, id int64) error {
	res := r.s.db.WithContext(ctx).Scopes(siteScope(site)).Where(idIs(id)).Delete(new(T))
	if res.Error != nil {
		return adminErr(res.Error)
	}
	if res.RowsAffected == 0 {
		return storage.ErrNotFound
	}
	return nil
}

func (r records[T]) List(ctx context.Context, site tenant.ID, p storage.Page, match ...storage.Match) ([]T, int, error) {
	conds, err := r.matches(match)
	if err != nil {
		return nil, 0, err
	}
	base := r.s.db.WithContext(ctx).Model(new(T)).Scopes(siteScope(site))
	for _, c := range conds {
		base = base.Where(c)
	}
	var rows []T
	if err := base.Session(&gormSession).Scopes(afterID(p.After)).Limit(limitOf(p)).Find(&rows).Error; err != nil {
		return nil, 0, adminErr(err)
	}
	var n int64
	if err := base.Session(&gormSession).Count(&n).Error; err != nil {
		return nil, 0, adminErr(err)
	}
	return rows, int(n), nil
}

// matches turns Match values into column conditions. Only the record's own
// fields, by Go name, are accepted: the field name never reaches SQL.
func (r records[T]) matches(match []storage.Match) ([]clause.Expression, error) {
	if len(match) == 0 {
		return nil, nil
	}
	stmt := &gorm.Statement{DB: r.s.db}
	if err := stmt.Parse(new(T)); err != nil {
		return nil, err
	}
	out := make([]clause.Expression, 0, len(match))
	for _, m := range match {
		f, ok := stmt.Schema.FieldsByName[m.Field]
		if !ok || f.DBName == "" {
			return nil, fmt.Errorf("sqlstore: %s has no field %q to match", stmt.Schema.Name, m.Field)
		}
		out = append(out, clause.Eq{Column: clause.Column{Table: clause.CurrentTable, Name: f.DBName}, Value: m.Value})
	}
	return out, nil
}

// ofCourse restricts sections and lectures to one course.
func ofCourse(courseID int64) clause.Expression {
	return clause.Eq{Column: clause.Column{Table: clause.CurrentTable, Name: "course_id"}, Value: courseID}
}

// Curriculum implements storage.AdminStore.
func (s *Store) Curriculum(ctx context.Context, site tenant.ID, courseID int64) ([]storage.SectionOutline, error) {
	db := s.db.WithContext(ctx)
	if _, err := (records[storage.Course]{s}).Get(ctx, site, courseID); err != nil {
		return nil, err
	}
	var sections []storage.Section
	if err := db.Scopes(siteScope(site)).Where(ofCourse(courseID)).Order("position, id").Find(&sections).Error; err != nil {
		return nil, mapErr(err)
	}
	var lectures []storage.Lecture
	if err := db.Scopes(siteScope(site)).Where(ofCourse(courseID)).Order("position, id").Find(&lectures).Error; err != nil {
		return nil, mapErr(err)
	}
	out := make([]storage.SectionOutline, len(sections))
	index := make(map[int64]int, len(sections))
	for i, sec := range sections {
		out[i] = storage.SectionOutline{Section: sec, Lectures: []storage.Lecture{}}
		index[sec.ID] = i
	}
	for _, l := range lectures {
		if i, ok := index[l.SectionID]; ok {
			out[i].Lectures = append(out[i].Lectures, l)
		}
	}
	return out, nil
}

// ReorderCurriculum implements storage.AdminStore.
func (s *Store) ReorderCurriculum(ctx context.Context, site tenant.ID, courseID int64, order []storage.PositionOrder) error {
	return adminErr(s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		one := func(res *gorm.DB) error {
			if res.Error != nil {
				return res.Error
			}
			if res.RowsAffected != 1 {
				return storage.ErrNotFound
			}
			return nil
		}
		for i, sec := range order {
			err := one(tx.Model(&storage.Section{}).Scopes(siteScope(site)).Where(ofCourse(courseID)).Where(idIs(sec.SectionID)).
				Update("position", i))
			if err != nil {
				return err
			}
			for j, lid := range sec.LectureIDs {
				err := one(tx.Model(&storage.Lecture{}).Scopes(siteScope(site)).Where(ofCourse(courseID)).Where(idIs(lid)).
					Updates(map[string]any{"position": j, "section_id": sec.SectionID}))
				if err != nil {
					return err
				}
			}
		}
		return nil
	}))
}

// ListMembers implements storage.AdminStore.
func (s *Store) ListMembers(ctx context.Context, site tenant.ID, role string, p storage.Page) ([]storage.MemberView, int, error) {
	db := s.db.WithContext(ctx)
	base := db.Table("site_roles").Joins("JOIN users ON users.id = site_roles.user_id").Scopes(siteScope(site))
	if role != "" {
		base = base.Where("site_roles.role = ?", role)
	}
	var rows []storage.MemberView
	err := base.Session(&gormSession).Select("DISTINCT users.id AS user_id, users.email, users.name").
		Order("users.email").Offset(int(p.After)).Limit(limitOf(p)).Find(&rows).Error
	if err != nil {
		return nil, 0, mapErr(err)
	}
	var n int64
	if err := base.Session(&gormSession).Distinct("site_roles.user_id").Count(&n).Error; err != nil {
		return nil, 0, mapErr(err)
	}
	if len(rows) == 0 {
		return rows, int(n), nil
	}
	ids := make([]string, len(rows))
	byID := make(map[string]*storage.MemberView, len(rows))
	for i := range rows {
		ids[i] = rows[i].UserID
		byID[rows[i].UserID] = &rows[i]
	}
	var roles []storage.SiteRole
	if err := db.Scopes(siteScope(site)).Where("user_id IN ?", ids).Order("role").Find(&roles).Error; err != nil {
		return nil, 0, mapErr(err)
	}
	for _, r := range roles {
		m := byID[r.UserID]
		m.Roles = append(m.Roles, r.Role)
		if m.Since.IsZero() || r.CreatedAt.Before(m.Since) {
			m.Since = r.CreatedAt
		}
	}
	return rows, int(n), nil
}

// OrderByID implements storage.AdminStore.
func (s *Store) OrderByID(ctx context.Context, site tenant.ID, id int64) (*storage.OrderView, error) {
	db := s.db.WithContext(ctx)
	var rows []storage.OrderView
	err := db.Table("orders").Select("orders.*, users.email AS customer_email").
		Joins("LEFT JOIN users ON users.id = orders.user_id").Scopes(siteScope(site)).Where(idIs(id)).Limit(1).Find(&rows).Error
	if err != nil {
		return nil, mapErr(err)
	}
	if len(rows) == 0 {
		return nil, storage.ErrNotFound
	}
	o := &rows[0]
	if err := db.Scopes(siteScope(site)).Where("order_id = ?", o.ID).Order("id").Find(&o.Items).Error; err != nil {
		return nil, mapErr(err)
	}
	return o, nil
}

// EnrollmentSummary implements storage.AdminStore.
func (s *Store) EnrollmentSummary(ctx context.Context, site tenant.ID, from, to time.Time) ([]storage.CourseEnrollments, error) {
	var rows []storage.CourseEnrollments
	err := s.db.WithContext(ctx).Table("enrollments").
		Select("courses.id AS course_id, courses.slug, courses.title, COUNT(*) AS enrollments").
		Joins("JOIN courses ON courses.id = enrollments.course_id AND courses.site_id = enrollments.site_id").
		Scopes(siteScope(site)).Where("enrollments.enrolled_at >= ? AND enrollments.enrolled_at < ?", from.UTC(), to.UTC()).
		Group("courses.id, courses.slug, courses.title").Order("COUNT(*) DESC, courses.id").Find(&rows).Error
	return rows, mapErr(err)
}

// Appearance implements storage.AdminStore.
func (s *Store) Appearance(ctx context.Context, site tenant.ID) (*storage.Appearance, error) {
	var a storage.Appearance
	if err := s.db.WithContext(ctx).Scopes(siteScope(site)).Take(&a).Error; err != nil {
		return nil, mapErr(err)
	}
	return &a, nil
}

// SaveAppearance implements storage.AdminStore.
func (s *Store) SaveAppearance(ctx context.Context, a *storage.Appearance) error {
	a.UpdatedAt = time.Now().UTC()
	return adminErr(s.db.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "site_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"primary_color", "accent_color", "background_color", "text_color", "logo_file_id", "updated_at"}),
	}).Create(a).Error)
}
