package adminapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/lectern/lectern/authserver/clientmeta"
	"github.com/lectern/lectern/internal/platform"
	"github.com/lectern/lectern/storage"
)

// Problem types (RFC 9457 §3.1.1). Plain HTTP statuses use about:blank
// (§4.2.1); the ones a client may act on have their own URN.
const (
	typeBlank            = "about:blank"
	typeValidation       = "urn:lectern:problem:validation"
	typeRoleRequired     = "urn:lectern:problem:role-required"
	typeFeatureDisabled  = "urn:lectern:problem:feature-disabled"
	typeIdempotencyReuse = "urn:lectern:problem:idempotency-key-reused"
	typeIdempotencyBusy  = "urn:lectern:problem:idempotency-key-in-progress"
	typeContrast         = "urn:lectern:problem:contrast"
)

// problemContentType is RFC 9457's media type.
const problemContentType = "application/problem+json"

// problem is an error answered as an RFC 9457 problem document.
type problem struct {
	Status int
	Type   string
	Title  string
	Detail string
	Fields []InvalidField
	// Contrast names the colour pair too close to read (typeContrast).
	Contrast *ContrastFailure
}

func (p *problem) Error() string {
	s := fmt.Sprintf("%d %s: %s", p.Status, p.Title, p.Detail)
	for _, f := range p.Fields {
		s += "; " + f.Field + ": " + f.Message
	}
	return s
}

func (p *problem) body() Problem {
	out := Problem{Type: p.Type, Title: p.Title, Status: p.Status}
	if out.Type == "" {
		out.Type = typeBlank
	}
	if out.Title == "" {
		out.Title = http.StatusText(p.Status)
	}
	if p.Detail != "" {
		d := p.Detail
		out.Detail = &d
	}
	if len(p.Fields) > 0 {
		f := p.Fields
		out.Errors = &f
	}
	out.Contrast = p.Contrast
	return out
}

func errNotFound(detail string) *problem {
	return &problem{Status: http.StatusNotFound, Detail: detail}
}

func errConflict(detail string, fields ...InvalidField) *problem {
	return &problem{Status: http.StatusConflict, Detail: detail, Fields: fields}
}

func errBadRequest(detail string, fields ...InvalidField) *problem {
	return &problem{Status: http.StatusBadRequest, Detail: detail, Fields: fields}
}

func errForbidden(detail string) *problem {
	return &problem{Status: http.StatusForbidden, Type: typeRoleRequired, Title: "Role required", Detail: detail}
}

// errInvalid is a 422 naming the invalid fields.
func errInvalid(fields ...InvalidField) *problem {
	return &problem{Status: http.StatusUnprocessableEntity, Type: typeValidation, Title: "Validation failed",
		Detail: "one or more fields are invalid", Fields: fields}
}

// invalidField is a 422 for one field.
func invalidField(field, message string) *problem {
	return errInvalid(InvalidField{Field: field, Message: message})
}

// clientFields maps RFC 7591 metadata names (platform's validation) to this
// API's field names.
var clientFields = map[string]string{
	"client_name":                "name",
	"redirect_uris":              "redirectUris",
	"scope":                      "scopes",
	"application_type":           "redirectUris",
	"token_endpoint_auth_method": "type",
	"resource_server":            "resourceServer",
}

// asProblem turns any error a handler returns into the answer it gets.
func (h *Handler) asProblem(ctx context.Context, err error) *problem {
	var (
		p    *problem
		meta *clientmeta.MetadataError
		he   *echo.HTTPError
		big  *http.MaxBytesError
	)
	switch {
	case errors.As(err, &p):
		return p
	case errors.As(err, &big):
		// The server's body limit, met while a chunked body was read.
		return &problem{Status: http.StatusRequestEntityTooLarge, Detail: "the request body is too large"}
	case errors.As(err, &meta):
		field := clientFields[meta.Field]
		if field == "" {
			field = meta.Field
		}
		msg := strings.TrimPrefix(meta.Description, meta.Field+": ")
		return invalidField(field, msg)
	case errors.Is(err, storage.ErrNotFound):
		return errNotFound("no such resource at this site")
	case errors.Is(err, storage.ErrConflict):
		return errConflict("the request conflicts with an existing resource")
	case errors.Is(err, platform.ErrInvalid):
		return errInvalid(InvalidField{Field: "", Message: strings.TrimPrefix(err.Error(), platform.ErrInvalid.Error()+": ")})
	case errors.Is(err, storage.ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
		h.log.WarnContext(ctx, "admin API dependency unavailable", "err", err)
		return &problem{Status: http.StatusServiceUnavailable, Detail: "a backing service is unavailable; try again shortly"}
	case errors.As(err, &he):
		return h.httpProblem(ctx, he)
	case errors.Is(err, http.ErrNotMultipart), errors.Is(err, http.ErrMissingBoundary):
		return &problem{Status: http.StatusUnsupportedMediaType, Detail: "send the file as multipart/form-data"}
	}
	h.log.ErrorContext(ctx, "admin API request failed", "err", err)
	return &problem{Status: http.StatusInternalServerError, Detail: "internal error"}
}

// httpProblem answers echo's and the generated code's errors: bad
// parameters and bodies (400), body limits (413), content types (415).
// Their messages may quote Go internals, so only what the client needs is
// kept.
func (h *Handler) httpProblem(ctx context.Context, he *echo.HTTPError) *problem {
	var (
		typeErr   *json.UnmarshalTypeError
		syntaxErr *json.SyntaxError
		timeErr   *time.ParseError
	)
	switch {
	case he.Code >= 500:
		h.log.ErrorContext(ctx, "admin API request failed", "err", he)
		return &problem{Status: he.Code, Detail: "internal error"}
	case errors.As(he.Internal, &typeErr):
		field := typeErr.Field
		if field == "" {
			field = "body"
		}
		return errBadRequest("a field has the wrong type", InvalidField{Field: field, Message: "must be a " + jsonKind(typeErr.Type.Kind().String())})
	case errors.As(he.Internal, &syntaxErr):
		return errBadRequest("the body is not valid JSON")
	case errors.As(he.Internal, &timeErr) || (he.Internal != nil && strings.Contains(he.Internal.Error(), "Time.UnmarshalJSON")):
		// The decoder does not say which member held the time.
		return errBadRequest("a date-time is not an RFC 3339 string such as 2026-01-31T12:00:00Z",
			InvalidField{Field: "body", Message: "has a date-time that is not an RFC 3339 string"})
	case he.Code == http.StatusRequestEntityTooLarge:
		return &problem{Status: he.Code, Detail: "the request body is too large"}
	case he.Code == http.StatusUnsupportedMediaType:
		return &problem{Status: he.Code, Detail: "send the body as application/json"}
	}
	msg, _ := he.Message.(string)
	if strings.HasPrefix(msg, "Invalid format for parameter ") {
		name, _, _ := strings.Cut(strings.TrimPrefix(msg, "Invalid format for parameter "), ":")
		return errBadRequest("a parameter is malformed", InvalidField{Field: name, Message: "is malformed"})
	}
	if strings.HasPrefix(msg, "Query argument ") && strings.HasSuffix(msg, " is required, but not found") {
		name := strings.TrimSuffix(strings.TrimPrefix(msg, "Query argument "), " is required, but not found")
		return errBadRequest("a parameter is missing", InvalidField{Field: name, Message: "is required"})
	}
	if he.Code == http.StatusBadRequest && he.Internal != nil {
		// A decoder's error: its text names Go types and formats, not the
		// API's fields.
		h.log.InfoContext(ctx, "admin API body refused", "err", he.Internal)
		return errBadRequest("the body does not match the operation's schema; see /openapi.json",
			InvalidField{Field: "body", Message: "does not match the schema"})
	}
	if msg == "" || he.Code != http.StatusBadRequest {
		msg = strings.ToLower(http.StatusText(he.Code))
	}
	return &problem{Status: he.Code, Detail: msg}
}

func jsonKind(goKind string) string {
	switch {
	case strings.HasPrefix(goKind, "int"), strings.HasPrefix(goKind, "uint"), strings.HasPrefix(goKind, "float"):
		return "number"
	case goKind == "bool":
		return "boolean"
	case goKind == "slice":
		return "array"
	case goKind == "struct", goKind == "map", goKind == "ptr":
		return "object"
	}
	return goKind
}

// writeError answers err as a problem document. It returns nil so that
// echo's error handler does not answer again.
func (h *Handler) writeError(c echo.Context, err error) error {
	if c.Response().Committed {
		h.log.WarnContext(c.Request().Context(), "admin API error after the answer began", "err", err)
		return nil
	}
	p := h.asProblem(c.Request().Context(), err)
	writeProblem(c.Response(), p)
	return nil
}

// WriteProblem answers an error of the API's paths that the server
// meets before the API's own handlers (a body over the limit, an unknown
// route, a method the path does not have) as the problem document the
// API's errors are: status, and a detail meant for the client.
func WriteProblem(w http.ResponseWriter, status int, detail string) {
	writeProblem(w, &problem{Status: status, Detail: detail})
}

func writeProblem(w http.ResponseWriter, p *problem) {
	hdr := w.Header()
	hdr.Set("Content-Type", problemContentType)
	hdr.Set("Cache-Control", "no-store")
	if p.Status == http.StatusServiceUnavailable {
		hdr.Set("Retry-After", "5")
	}
	w.WriteHeader(p.Status)
	_ = json.NewEncoder(w).Encode(p.body())
}
