package adminapi

import (
	"context"

	"github.com/lectern/lectern/storage"
)

const kindCourse kind = "course"

func toCourse(c *storage.Course) Course {
	return Course{Id: c.ID, Slug: c.Slug, Title: c.Title, Subtitle: c.Subtitle, Description: c.Description,
		Category: c.Category, PriceCents: c.PriceCents, Currency: c.Currency, Status: PublicationStatus(c.Status),
		ImageUrl: c.ImageURL, PublishedAt: c.PublishedAt, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
}

func validateCourse(c *storage.Course) error {
	var f fields
	f.slug("slug", c.Slug)
	f.text("title", c.Title, 1, 300, false)
	f.text("subtitle", c.Subtitle, 0, 300, false)
	f.text("description", c.Description, 0, 20000, true)
	f.text("category", c.Category, 0, 120, false)
	f.nonNegative("priceCents", c.PriceCents)
	f.currency("currency", c.Currency)
	f.webURL("imageUrl", c.ImageURL, 1000)
	return f.err()
}

var courses = resource[storage.Course, Course]{kind: kindCourse, records: Store.CourseRecords,
	view: toCourse, validate: validateCourse, unique: "slug",
	inUse: refuseIfUsed[storage.Course](Store.EnrollmentRecords, "CourseID", "students are enrolled in this course; unpublish it instead")}

// ListCourses implements GET /courses (courses:read).
func (h *Handler) ListCourses(ctx context.Context, req ListCoursesRequestObject) (ListCoursesResponseObject, error) {
	return list[ListCourses200JSONResponse](ctx, h, courses, req.Params.Cursor, req.Params.Limit)
}

// CreateCourse implements POST /courses (courses:write). New courses are
// drafts.
func (h *Handler) CreateCourse(ctx context.Context, req CreateCourseRequestObject) (CreateCourseResponseObject, error) {
	b := req.Body
	c, err := courses.create(ctx, h, &storage.Course{Slug: b.Slug, Title: b.Title, Subtitle: orDefault(b.Subtitle, ""),
		Description: orDefault(b.Description, ""), Category: orDefault(b.Category, ""), PriceCents: orDefault(b.PriceCents, 0),
		Currency: orDefault(b.Currency, "USD"), ImageURL: orDefault(b.ImageUrl, ""), Status: storage.StatusDraft})
	return CreateCourse201JSONResponse(c), err
}

// GetCourse implements GET /courses/{courseId} (courses:read).
func (h *Handler) GetCourse(ctx context.Context, req GetCourseRequestObject) (GetCourseResponseObject, error) {
	c, err := courses.get(ctx, h, req.CourseId)
	return GetCourse200JSONResponse(c), err
}

// UpdateCourse implements PATCH /courses/{courseId} (courses:write).
func (h *Handler) UpdateCourse(ctx context.Context, req UpdateCourseRequestObject) (UpdateCourseResponseObject, error) {
	b := req.Body
	c, err := courses.change(ctx, h, req.CourseId, func(c *storage.Course) {
		set(&c.Slug, b.Slug)
		set(&c.Title, b.Title)
		set(&c.Subtitle, b.Subtitle)
		set(&c.Description, b.Description)
		set(&c.Category, b.Category)
		set(&c.PriceCents, b.PriceCents)
		set(&c.Currency, b.Currency)
		set(&c.ImageURL, b.ImageUrl)
	})
	return UpdateCourse200JSONResponse(c), err
}

// DeleteCourse implements DELETE /courses/{courseId} (courses:write). A
// course people are enrolled in stays: deleting it would take their access
// and progress with it.
func (h *Handler) DeleteCourse(ctx context.Context, req DeleteCourseRequestObject) (DeleteCourseResponseObject, error) {
	_, err := courses.delete(ctx, h, req.CourseId)
	return DeleteCourse204Response{}, err
}

// PublishCourse implements POST /courses/{courseId}/publish (courses:write).
func (h *Handler) PublishCourse(ctx context.Context, req PublishCourseRequestObject) (PublishCourseResponseObject, error) {
	c, err := h.setCourseStatus(ctx, req.CourseId, storage.StatusPublished)
	if err != nil {
		return nil, err
	}
	return PublishCourse200JSONResponse(toCourse(c)), nil
}

// UnpublishCourse implements POST /courses/{courseId}/unpublish
// (courses:write).
func (h *Handler) UnpublishCourse(ctx context.Context, req UnpublishCourseRequestObject) (UnpublishCourseResponseObject, error) {
	c, err := h.setCourseStatus(ctx, req.CourseId, storage.StatusDraft)
	if err != nil {
		return nil, err
	}
	return UnpublishCourse200JSONResponse(toCourse(c)), nil
}

// setCourseStatus publishes or unpublishes; a course already in that state
// is answered as it is, without a write or an audit event.
func (h *Handler) setCourseStatus(ctx context.Context, id int64, status string) (*storage.Course, error) {
	c, err := courses.row(ctx, h, id)
	if err != nil || c.Status == status {
		return c, err
	}
	c.Status = status
	if status == storage.StatusPublished {
		c.PublishedAt = ptr(h.now().UTC())
	} else {
		c.PublishedAt = nil
	}
	if err := h.store.CourseRecords().Update(ctx, siteOf(ctx), c); err != nil {
		return nil, err
	}
	action := "course.published"
	if status == storage.StatusDraft {
		action = "course.unpublished"
	}
	h.audit(ctx, action, kindCourse.target(id), nil)
	return c, nil
}
