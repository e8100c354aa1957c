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

var (
	forms       = resource[storage.Form, Form]{kind: kindForm, records: Store.FormRecords, view: toForm}
	submissions = resource[storage.FormSubmission, FormSubmission]{kind: "form_submission", records: Store.FormSubmissionRecords, view: toSubmission}
)

// ListForms implements GET /forms (forms:read).
func (h *Handler) ListForms(ctx context.Context, req ListFormsRequestObject) (ListFormsResponseObject, error) {
	return list[ListForms200JSONResponse](ctx, h, forms, req.Params.Cursor, req.Params.Limit)
}

// ListFormSubmissions implements GET /forms/{formId}/submissions
// (forms:read).
func (h *Handler) ListFormSubmissions(ctx context.Context, req ListFormSubmissionsRequestObject) (ListFormSubmissionsResponseObject, error) {
	if _, err := forms.row(ctx, h, req.FormId); err != nil {
		return nil, err
	}
	return list[ListFormSubmissions200JSONResponse](ctx, h, submissions, req.Params.Cursor, req.Params.Limit,
		storage.Match{Field: "FormID", Value: req.FormId})
}
