package memberapi

import (
	"context"
	"errors"
	"fmt"

	gqlerrors "github.com/graph-gophers/graphql-go/errors"

	"github.com/lectern/lectern/storage"
)

// The extensions.code of every error the Member API answers with. Where
// Apollo Server defines a code for the same condition, it is that code.
const (
	// Requests that cannot be executed (HTTP 4xx, no data).
	CodeMethodNotAllowed     = "METHOD_NOT_ALLOWED"     // 405: only POST
	CodeUnsupportedMediaType = "UNSUPPORTED_MEDIA_TYPE" // 415: only application/json
	CodePayloadTooLarge      = "PAYLOAD_TOO_LARGE"      // 413: body over Limits.MaxBodyBytes
	CodeBadRequest           = "BAD_REQUEST"            // 400: not a GraphQL-over-HTTP request
	CodeParseFailed          = "GRAPHQL_PARSE_FAILED"   // 400: syntax error
	CodeValidationFailed     = "GRAPHQL_VALIDATION_FAILED"
	CodeOperationResolution  = "OPERATION_RESOLUTION_FAILURE" // 400: operationName names no operation
	CodeQueryTooLarge        = "QUERY_TOO_LARGE"              // 400: query over Limits.MaxQueryBytes
	CodeQueryTooComplex      = "QUERY_TOO_COMPLEX"            // 400: depth, fields, selections, cost

	// Field errors (HTTP 200, data with nulls), and 503 for UNAVAILABLE.
	CodeBadUserInput = "BAD_USER_INPUT" // an argument is out of range or a cursor is not one of ours
	CodeNotFound     = "NOT_FOUND"      // not one of the member's rows at this site
	CodeForbidden    = "FORBIDDEN"      // the token lacks the scope (the HTTP layer answers 403 first)
	CodeUnavailable  = "UNAVAILABLE"    // storage is down: the response is 503 with Retry-After
	CodeInternal     = "INTERNAL_SERVER_ERROR"
)

// fieldError is what resolvers return. Its message is shown to the client
// and must never carry internals; cause (storage errors and the like) is
// logged by the handler, once, and never shown.
type fieldError struct {
	code    string
	message string
	cause   error
}

func (e *fieldError) Error() string { return e.message }

// Extensions implements graphql-go's extensionser: the code the client sees.
func (e *fieldError) Extensions() map[string]any { return map[string]any{"code": e.code} }

func (e *fieldError) Unwrap() error { return e.cause }

func badInput(format string, args ...any) *fieldError {
	return &fieldError{code: CodeBadUserInput, message: fmt.Sprintf(format, args...)}
}

func notFound(message string) *fieldError {
	return &fieldError{code: CodeNotFound, message: message}
}

// storeError turns an error of the store into a field error: ErrNotFound
// with the caller's message, ErrUnavailable (and a deadline) as
// UNAVAILABLE, anything else as an internal error. Only the code and a fixed
// message reach the client.
func storeError(err error, notFoundMessage string) *fieldError {
	switch {
	case notFoundMessage != "" && errors.Is(err, storage.ErrNotFound):
		return notFound(notFoundMessage)
	case errors.Is(err, storage.ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
		return &fieldError{code: CodeUnavailable, message: "the service is temporarily unavailable; try again shortly", cause: err}
	default:
		return &fieldError{code: CodeInternal, message: "internal error", cause: err}
	}
}

// requestError is an error of a request that cannot be executed.
func requestError(code, format string, args ...any) *gqlerrors.QueryError {
	return &gqlerrors.QueryError{Message: fmt.Sprintf(format, args...), Extensions: map[string]any{"code": code}}
}

// withCode sets extensions.code on err unless it has one.
func withCode(err *gqlerrors.QueryError, code string) *gqlerrors.QueryError {
	if _, ok := err.Extensions["code"]; ok {
		return err
	}
	ext := make(map[string]any, len(err.Extensions)+1)
	for k, v := range err.Extensions {
		ext[k] = v
	}
	ext["code"] = code
	err.Extensions = ext
	return err
}

// validationCode is the code of an error graphql-go's parser or validator
// returned.
func validationCode(err *gqlerrors.QueryError) string {
	switch {
	case errors.Is(err, gqlerrors.ErrSyntax):
		return CodeParseFailed
	case err.Rule == "MaxDepthExceeded" || err.Rule == "OverlapValidationLimitExceeded" || errors.Is(err, errTooManySelections):
		return CodeQueryTooComplex
	case err.Rule == "VariablesOfCorrectType":
		// A variable the request left out or sent as null although the
		// operation requires it: bad input, as a wrongly typed one is
		// (checkVariables).
		return CodeBadUserInput
	default:
		return CodeValidationFailed
	}
}

// panicHandler answers a resolver panic as an internal error; the panic
// itself is logged by the schema's Logger.
type panicHandler struct{}

func (panicHandler) MakePanicError(context.Context, any) *gqlerrors.QueryError {
	return requestError(CodeInternal, "internal error")
}
