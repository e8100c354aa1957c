package adminapi

import (
	"context"

	"github.com/lectern/lectern/storage"
)

const kindForm kind = "form"

func toForm(f *storage.Form) Form {
	out := Form{Id: f.ID, Slug: f.Slug, Title: f.Title, CreatedAt: f.CreatedAt, Fields: make([]FormField, 0, len(f.Fields))}
	for _, fd := range f.Fields {
		out.Fields = append(out.Fields, FormField{Name: fd.Name, Label: fd.Label, Type: fd.Type, Required: fd.Required})
	}
	return out
}

func toSubmission(s *storage.FormSubmission) FormSubmission {
	data := s.Data
	if data == nil {
		data = map[string]string{}
	}
	return FormSubmission{Id: s.ID, FormId: s.FormID, UserId: s.UserID, Email: s.Email, Data: data, CreatedAt: s.CreatedAt}
}

// ListForms implements GET /forms (forms:read).
func (h *Handler) ListForms(ctx context.Context, req ListFormsRequestObject) (ListFormsResponseObject, error) {
	p, err := keysetPage(ctx, h.store.FormRecords(), req.Params.Cursor, req.Params.Limit, toForm)
	if err != nil {
		return nil, err
	}
	return ListForms200JSONResponse{Items: p.items, NextCursor: p.next, TotalCount: p.total}, nil
}

// ListFormSubmissions implements GET /forms/{formId}/submissions
// (forms:read).
func (h *Handler) ListFormSubmissions(ctx context.Context, req ListFormSubmissionsRequestObject) (ListFormSubmissionsResponseObject, error) {
	if _, err := getRecord(ctx, h.store.FormRecords(), kindForm, req.FormId); err != nil {
		return nil, err
	}
	p, err := keysetPage(ctx, h.store.FormSubmissionRecords(), req.Params.Cursor, req.Params.Limit, toSubmission,
		storage.Match{Field: "FormID", Value: req.FormId})
	if err != nil {
		return nil, err
	}
	return ListFormSubmissions200JSONResponse{Items: p.items, NextCursor: p.next, TotalCount: p.total}, nil
}
