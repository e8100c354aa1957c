package adminapi

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/lectern/lectern/storage"
)

const kindEnrollment kind = "enrollment"

// enrollments has no view: an enrollment shows its course (toEnrollment).
var enrollments = resource[storage.Enrollment, struct{}]{kind: kindEnrollment, records: Store.EnrollmentRecords}

func toStudent(s *storage.StudentView) Student {
	return Student{UserId: s.UserID, Email: s.Email, Name: s.Name, Enrollments: s.Enrollments, Since: s.Since}
}

func toEnrollment(e *storage.Enrollment, c *storage.Course) Enrollment {
	return Enrollment{Id: e.ID, UserId: e.UserID, CourseId: e.CourseID, CourseSlug: c.Slug, CourseTitle: c.Title,
		EnrolledAt: e.EnrolledAt, ExpiresAt: e.ExpiresAt, LifetimeAccess: e.ExpiresAt == nil}
}

// personByEmail finds the account an e-mail address names: 422 on field
// when there is none (the API never creates accounts).
func (h *Handler) personByEmail(ctx context.Context, field, email string) (*storage.User, error) {
	var f fields
	f.email(field, email)
	if err := f.err(); err != nil {
		return nil, err
	}
	u, err := h.store.UserByEmail(ctx, strings.TrimSpace(email))
	if errors.Is(err, storage.ErrNotFound) {
		return nil, invalidField(field, "no account has this e-mail address")
	}
	return u, err
}

// ListStudents implements GET /students (students:read). The list is
// ordered by e-mail and paged by offset.
func (h *Handler) ListStudents(ctx context.Context, req ListStudentsRequestObject) (ListStudentsResponseObject, error) {
	p, err := pageOf(req.Params.Cursor, req.Params.Limit)
	if err != nil {
		return nil, err
	}
	search := orDefault(req.Params.Search, "")
	var f fields
	if f.text("search", search, 0, 200, false); len(f) > 0 {
		return nil, errBadRequest("the search is not text this list can match", f...)
	}
	rows, total, err := h.store.ListStudents(ctx, siteOf(ctx), search, p)
	if err != nil {
		return nil, err
	}
	out := StudentList{Items: make([]Student, 0, len(rows)), TotalCount: total, NextCursor: offsetNext(p, len(rows), total)}
	for i := range rows {
		out.Items = append(out.Items, toStudent(&rows[i]))
	}
	return ListStudents200JSONResponse(out), nil
}

// GetStudent implements GET /students/{userId} (students:read): someone
// without the student role at this site is 404, whoever they are elsewhere.
func (h *Handler) GetStudent(ctx context.Context, req GetStudentRequestObject) (GetStudentResponseObject, error) {
	site := siteOf(ctx)
	roles, err := h.store.RolesAt(ctx, site, req.UserId)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(roles, storage.RoleStudent) {
		return nil, errNotFound("no such student at this site")
	}
	u, err := h.store.UserByID(ctx, req.UserId)
	if err != nil {
		return nil, err
	}
	out := StudentDetail{UserId: u.ID, Email: u.Email, Name: u.Name, EnrollmentList: []Enrollment{}}
	p := storage.Page{Limit: maxLimit}
	for {
		rows, _, err := h.store.ListEnrollments(ctx, site, u.ID, p)
		if err != nil {
			return nil, err
		}
		for _, e := range rows {
			out.EnrollmentList = append(out.EnrollmentList, Enrollment{Id: e.ID, UserId: u.ID, CourseId: e.CourseID,
				CourseSlug: e.CourseSlug, CourseTitle: e.CourseTitle, EnrolledAt: e.EnrolledAt, ExpiresAt: e.ExpiresAt,
				LifetimeAccess: e.ExpiresAt == nil})
		}
		if len(rows) < p.Limit {
			break
		}
		p.After = rows[len(rows)-1].ID
	}
	return GetStudent200JSONResponse(out), nil
}

// EnrollStudent implements POST /enrollments (students:write). A person
// who is not yet a student of the site becomes one.
func (h *Handler) EnrollStudent(ctx context.Context, req EnrollStudentRequestObject) (EnrollStudentResponseObject, error) {
	b := req.Body
	site := siteOf(ctx)
	u, err := h.personByEmail(ctx, "email", string(b.Email))
	if err != nil {
		return nil, err
	}
	course, err := h.store.CourseRecords().Get(ctx, site, b.CourseId)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, invalidField("courseId", "no course with this id at this site")
	} else if err != nil {
		return nil, err
	}
	now := h.now().UTC()
	if b.ExpiresAt != nil && !b.ExpiresAt.After(now) {
		return nil, invalidField("expiresAt", "must be in the future")
	}
	roles, err := h.store.RolesAt(ctx, site, u.ID)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(roles, storage.RoleStudent) {
		if _, err := h.platform.GrantRole(ctx, site, u.Email, storage.RoleStudent); err != nil {
			return nil, err
		}
		h.audit(ctx, "role.granted", "user:"+u.ID, map[string]any{"role": storage.RoleStudent})
	}
	e := &storage.Enrollment{UserID: u.ID, CourseID: course.ID, EnrolledAt: now, ExpiresAt: b.ExpiresAt}
	if err := h.store.EnrollmentRecords().Create(ctx, site, e); err != nil {
		if errors.Is(err, storage.ErrConflict) {
			return nil, errConflict(fmt.Sprintf("%s is already enrolled in this course", u.Email))
		}
		return nil, err
	}
	h.audit(ctx, "enrollment.created", kindEnrollment.target(e.ID), map[string]any{"user": u.ID, "course": course.ID})
	return EnrollStudent201JSONResponse(toEnrollment(e, course)), nil
}

// UpdateEnrollment implements PATCH /enrollments/{enrollmentId}
// (students:write): a new expiry, or lifetime access.
func (h *Handler) UpdateEnrollment(ctx context.Context, req UpdateEnrollmentRequestObject) (UpdateEnrollmentResponseObject, error) {
	b := req.Body
	lifetime := b.LifetimeAccess != nil && bool(*b.LifetimeAccess)
	switch {
	case b.ExpiresAt != nil && b.LifetimeAccess != nil:
		return nil, invalidField("lifetimeAccess", "give either expiresAt or lifetimeAccess, not both")
	case b.ExpiresAt == nil && !lifetime:
		return nil, invalidField("expiresAt", "give expiresAt, or lifetimeAccess: true")
	case b.ExpiresAt != nil && !b.ExpiresAt.After(h.now()):
		return nil, invalidField("expiresAt", "must be in the future")
	}
	e, err := enrollments.update(ctx, h, req.EnrollmentId, func(e *storage.Enrollment) { e.ExpiresAt = b.ExpiresAt })
	if err != nil {
		return nil, err
	}
	course, err := h.store.CourseRecords().Get(ctx, siteOf(ctx), e.CourseID)
	if err != nil {
		return nil, err
	}
	return UpdateEnrollment200JSONResponse(toEnrollment(e, course)), nil
}

// UnenrollStudent implements DELETE /enrollments/{enrollmentId}
// (students:write).
func (h *Handler) UnenrollStudent(ctx context.Context, req UnenrollStudentRequestObject) (UnenrollStudentResponseObject, error) {
	_, err := enrollments.delete(ctx, h, req.EnrollmentId)
	return UnenrollStudent204Response{}, err
}
