package adminapi

import (
	"context"

	"github.com/lectern/lectern/storage"
)

const kindLecturer kind = "lecturer"

func toLecturer(l *storage.Lecturer) Lecturer {
	return Lecturer{Id: l.ID, Slug: l.Slug, Name: l.Name, Bio: l.Bio, UserId: l.UserID, CreatedAt: l.CreatedAt, UpdatedAt: l.UpdatedAt}
}

func validateLecturer(l *storage.Lecturer) error {
	var f fields
	f.slug("slug", l.Slug)
	f.text("name", l.Name, 1, 200, false)
	f.text("bio", l.Bio, 0, 20000, true)
	return f.err()
}

var lecturers = resource[storage.Lecturer, Lecturer]{kind: kindLecturer, records: Store.LecturerRecords,
	view: toLecturer, validate: validateLecturer, unique: "slug"}

// ListLecturers implements GET /lecturers (lecturers:read).
func (h *Handler) ListLecturers(ctx context.Context, req ListLecturersRequestObject) (ListLecturersResponseObject, error) {
	return list[ListLecturers200JSONResponse](ctx, h, lecturers, req.Params.Cursor, req.Params.Limit)
}

// CreateLecturer implements POST /lecturers (lecturers:write).
func (h *Handler) CreateLecturer(ctx context.Context, req CreateLecturerRequestObject) (CreateLecturerResponseObject, error) {
	b := req.Body
	l, err := lecturers.create(ctx, h, &storage.Lecturer{Slug: b.Slug, Name: b.Name, Bio: orDefault(b.Bio, "")})
	return CreateLecturer201JSONResponse(l), err
}

// GetLecturer implements GET /lecturers/{lecturerId} (lecturers:read).
func (h *Handler) GetLecturer(ctx context.Context, req GetLecturerRequestObject) (GetLecturerResponseObject, error) {
	l, err := lecturers.get(ctx, h, req.LecturerId)
	return GetLecturer200JSONResponse(l), err
}

// UpdateLecturer implements PATCH /lecturers/{lecturerId} (lecturers:write).
func (h *Handler) UpdateLecturer(ctx context.Context, req UpdateLecturerRequestObject) (UpdateLecturerResponseObject, error) {
	b := req.Body
	l, err := lecturers.change(ctx, h, req.LecturerId, func(l *storage.Lecturer) {
		set(&l.Slug, b.Slug)
		set(&l.Name, b.Name)
		set(&l.Bio, b.Bio)
	})
	return UpdateLecturer200JSONResponse(l), err
}

// DeleteLecturer implements DELETE /lecturers/{lecturerId}
// (lecturers:write); the lecturer leaves the courses they taught.
func (h *Handler) DeleteLecturer(ctx context.Context, req DeleteLecturerRequestObject) (DeleteLecturerResponseObject, error) {
	_, err := lecturers.delete(ctx, h, req.LecturerId)
	return DeleteLecturer204Response{}, err
}
