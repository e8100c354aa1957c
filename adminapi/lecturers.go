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

// ListLecturers implements GET /lecturers (lecturers:read).
func (h *Handler) ListLecturers(ctx context.Context, req ListLecturersRequestObject) (ListLecturersResponseObject, error) {
	p, err := keysetPage(ctx, h.store.LecturerRecords(), req.Params.Cursor, req.Params.Limit, toLecturer)
	if err != nil {
		return nil, err
	}
	return ListLecturers200JSONResponse{Items: p.items, NextCursor: p.next, TotalCount: p.total}, nil
}

// CreateLecturer implements POST /lecturers (lecturers:write).
func (h *Handler) CreateLecturer(ctx context.Context, req CreateLecturerRequestObject) (CreateLecturerResponseObject, error) {
	b := req.Body
	l := &storage.Lecturer{Slug: b.Slug, Name: b.Name, Bio: orDefault(b.Bio, "")}
	if err := createRecord(ctx, h, h.store.LecturerRecords(), kindLecturer, l, validateLecturer, "slug"); err != nil {
		return nil, err
	}
	return CreateLecturer201JSONResponse(toLecturer(l)), nil
}

// GetLecturer implements GET /lecturers/{lecturerId} (lecturers:read).
func (h *Handler) GetLecturer(ctx context.Context, req GetLecturerRequestObject) (GetLecturerResponseObject, error) {
	l, err := getRecord(ctx, h.store.LecturerRecords(), kindLecturer, req.LecturerId)
	if err != nil {
		return nil, err
	}
	return GetLecturer200JSONResponse(toLecturer(l)), nil
}

// UpdateLecturer implements PATCH /lecturers/{lecturerId} (lecturers:write).
func (h *Handler) UpdateLecturer(ctx context.Context, req UpdateLecturerRequestObject) (UpdateLecturerResponseObject, error) {
	b := req.Body
	l, err := updateRecord(ctx, h, h.store.LecturerRecords(), kindLecturer, req.LecturerId, func(l *storage.Lecturer) error {
		set(&l.Slug, b.Slug)
		set(&l.Name, b.Name)
		set(&l.Bio, b.Bio)
		return nil
	}, validateLecturer, "slug")
	if err != nil {
		return nil, err
	}
	return UpdateLecturer200JSONResponse(toLecturer(l)), nil
}

// DeleteLecturer implements DELETE /lecturers/{lecturerId}
// (lecturers:write); the lecturer leaves the courses they taught.
func (h *Handler) DeleteLecturer(ctx context.Context, req DeleteLecturerRequestObject) (DeleteLecturerResponseObject, error) {
	if err := deleteRecord(ctx, h, h.store.LecturerRecords(), kindLecturer, req.LecturerId, nil); err != nil {
		return nil, err
	}
	return DeleteLecturer204Response{}, nil
}
