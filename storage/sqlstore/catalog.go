package sqlstore

import (
	"context"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"gorm.io/gorm"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// published restricts catalog reads to published items.
func published(db *gorm.DB) *gorm.DB { return db.Where("status = ?", storage.StatusPublished) }

// likePattern escapes LIKE wildcards in user text.
func likePattern(text string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(strings.ToLower(text)) + "%"
}

// unmatchable reports text no stored name can contain: a control character
// or invalid UTF-8. Searches for it match nothing and never reach the
// database (SQLite reads a NUL as the end of the pattern, PostgreSQL
// refuses it as an encoding error).
func unmatchable(text string) bool {
	return strings.ContainsFunc(text, unicode.IsControl) || !utf8.ValidString(text)
}

// SearchCourses implements storage.CatalogStore.
func (s *Store) SearchCourses(ctx context.Context, site tenant.ID, q storage.CourseQuery) ([]storage.Course, int, error) {
	if unmatchable(q.Text) || unmatchable(q.Category) {
		return []storage.Course{}, 0, nil
	}
	base := func() *gorm.DB {
		db := s.db.WithContext(ctx).Model(&storage.Course{}).Scopes(siteScope(site), published)
		if t := strings.TrimSpace(q.Text); t != "" {
			p := likePattern(t)
			db = db.Where(`(LOWER(title) LIKE ? ESCAPE '\' OR LOWER(subtitle) LIKE ? ESCAPE '\' OR LOWER(description) LIKE ? ESCAPE '\')`, p, p, p)
		}
		if c := strings.TrimSpace(q.Category); c != "" {
			db = db.Where("LOWER(category) = ?", strings.ToLower(c))
		}
		return db
	}
	var rows []storage.Course
	if err := base().Scopes(afterID(q.After)).Limit(limitOf(q.Page)).Find(&rows).Error; err != nil {
		return nil, 0, mapErr(err)
	}
	var n int64
	if err := base().Count(&n).Error; err != nil {
		return nil, 0, mapErr(err)
	}
	return rows, int(n), nil
}

// CourseBySlug implements storage.CatalogStore.
func (s *Store) CourseBySlug(ctx context.Context, site tenant.ID, slug string) (*storage.CourseDetail, error) {
	db := s.db.WithContext(ctx)
	var d storage.CourseDetail
	if err := db.Scopes(siteScope(site), published).Take(&d.Course, "slug = ?", slug).Error; err != nil {
		return nil, mapErr(err)
	}
	if err := db.Table("lecturers").Select("lecturers.*").
		Joins("JOIN course_lecturers ON course_lecturers.lecturer_id = lecturers.id AND course_lecturers.site_id = lecturers.site_id").
		Scopes(siteScope(site)).Where("course_lecturers.course_id = ?", d.ID).
		Order("course_lecturers.position").Find(&d.Lecturers).Error; err != nil {
		return nil, mapErr(err)
	}
	var sections []storage.Section
	if err := db.Scopes(siteScope(site)).Where("course_id = ?", d.ID).Order("position, id").Find(&sections).Error; err != nil {
		return nil, mapErr(err)
	}
	var lectures []storage.Lecture
	if err := db.Scopes(siteScope(site), published).Where("course_id = ?", d.ID).Order("position, id").Find(&lectures).Error; err != nil {
		return nil, mapErr(err)
	}
	for _, sec := range sections {
		o := storage.SectionOutline{Section: sec}
		for _, l := range lectures {
			if l.SectionID == sec.ID {
				o.Lectures = append(o.Lectures, l)
			}
		}
		d.Sections = append(d.Sections, o)
	}
	return &d, nil
}

// upcoming restricts events to public, published ones starting at or after
// from.
func upcoming(from time.Time) func(*gorm.DB) *gorm.DB {
	return func(db *gorm.DB) *gorm.DB {
		return db.Where("public = ? AND status = ? AND starts_at >= ?", true, storage.StatusPublished, from.UTC())
	}
}

// ListUpcomingEvents implements storage.CatalogStore.
func (s *Store) ListUpcomingEvents(ctx context.Context, site tenant.ID, from time.Time, p storage.Page) ([]storage.Event, int, error) {
	db := s.db.WithContext(ctx)
	q := db.Scopes(siteScope(site), upcoming(from))
	if p.After > 0 {
		var cur storage.Event
		if err := db.Scopes(siteScope(site)).Take(&cur, "id = ?", p.After).Error; err != nil {
			return nil, 0, mapErr(err)
		}
		q = q.Where("(starts_at > ? OR (starts_at = ? AND id > ?))", cur.StartsAt, cur.StartsAt, cur.ID)
	}
	var rows []storage.Event
	if err := q.Order("starts_at, id").Limit(limitOf(p)).Find(&rows).Error; err != nil {
		return nil, 0, mapErr(err)
	}
	var n int64
	if err := db.Model(&storage.Event{}).Scopes(siteScope(site), upcoming(from)).Count(&n).Error; err != nil {
		return nil, 0, mapErr(err)
	}
	return rows, int(n), nil
}

// Offerings implements storage.CatalogStore.
func (s *Store) Offerings(ctx context.Context, site tenant.ID, now time.Time) (*storage.Offerings, error) {
	db := s.db.WithContext(ctx)
	var o storage.Offerings
	for _, q := range []struct{ dst any }{{&o.Courses}, {&o.MembershipPlans}, {&o.DigitalProducts}, {&o.ConsultingServices}} {
		if err := db.Scopes(siteScope(site), published).Order("id").Find(q.dst).Error; err != nil {
			return nil, mapErr(err)
		}
	}
	if err := db.Scopes(siteScope(site), upcoming(now)).Order("starts_at, id").Find(&o.Events).Error; err != nil {
		return nil, mapErr(err)
	}
	return &o, nil
}

// Categories implements storage.CatalogStore.
func (s *Store) Categories(ctx context.Context, site tenant.ID) ([]string, error) {
	var cats []string
	err := s.db.WithContext(ctx).Model(&storage.Course{}).Scopes(siteScope(site), published).
		Where("category <> ''").Distinct("category").Pluck("category", &cats).Error
	sort.Strings(cats)
	return cats, mapErr(err)
}
