package memberapi

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	graphql "github.com/graph-gophers/graphql-go"
	gqlerrors "github.com/graph-gophers/graphql-go/errors"
	gqllog "github.com/graph-gophers/graphql-go/log"

	"github.com/lectern/lectern/authserver/bearer"
	"github.com/lectern/lectern/authserver/scope"
	"github.com/lectern/lectern/internal/jsonx"
	"github.com/lectern/lectern/tenant"
)

// schemaSDL is the Member API's schema (schema.graphql), as served.
//
//go:embed schema.graphql
var schemaSDL string

// Media types of GraphQL over HTTP.
const (
	mediaJSON            = "application/json"
	mediaGraphQLResponse = "application/graphql-response+json"
)

// retryAfter is the Retry-After of a 503, in seconds, as bearer answers.
const retryAfter = "5"

var errTooManySelections = graphql.ErrTooManySelections

// Options configures New. Store and Verifier are required.
type Options struct {
	Store Store
	// Verifier authenticates requests (*bearer.Verifier).
	Verifier Authenticator
	// Logger receives the causes of internal and unavailable errors, and
	// resolver panics. Default: discard.
	Logger *slog.Logger
	// Now is the clock of read times. Default time.Now.
	Now func() time.Time
	// Limits; nil means DefaultLimits.
	Limits *Limits
	// Budget, if set, charges each request's cost to its site.
	Budget Budget
}

// Handler serves the Member API: GraphQL over POST at /member/graphql
// (vocab.MemberGraphQLPath). It is safe for concurrent use.
type Handler struct {
	schema *graphql.Schema
	info   *schemaInfo
	store  Store
	auth   Authenticator
	log    *slog.Logger
	now    func() time.Time
	limits Limits
	budget Budget
}

// New parses the embedded schema against the resolvers and returns the
// handler. An error means the schema and the resolvers disagree: a
// programming mistake, which the package's tests catch.
func New(o Options) (*Handler, error) {
	if o.Store == nil || o.Verifier == nil {
		return nil, errors.New("memberapi: New needs Options.Store and Options.Verifier")
	}
	h := &Handler{store: o.Store, auth: o.Verifier, log: o.Logger, now: o.Now, limits: o.Limits.withDefaults(), budget: o.Budget}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	if h.now == nil {
		h.now = time.Now
	}
	l := h.limits
	schema, err := graphql.ParseSchema(schemaSDL, &resolver{},
		graphql.UseStringDescriptions(),
		graphql.MaxQueryLength(l.MaxQueryBytes),
		graphql.MaxDepth(l.MaxDepth),
		graphql.MaxSelections(l.MaxSelections),
		graphql.MaxParallelism(l.MaxParallelism),
		// Overlapping-field validation is quadratic; bound it well above what
		// any honest query of this schema needs.
		graphql.OverlapValidationLimit(20000),
		graphql.PanicHandler(panicHandler{}),
		graphql.Logger(gqllog.LoggerFunc(func(ctx context.Context, v any) {
			h.log.ErrorContext(ctx, "memberapi: resolver panic", "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
		})),
	)
	if err != nil {
		return nil, fmt.Errorf("memberapi: schema: %w", err)
	}
	h.schema = schema
	h.info = newSchemaInfo(schema.AST())
	return h, nil
}

// params is a GraphQL-over-HTTP request (a JSON body).
type params struct {
	Query         string
	OperationName string
	Variables     map[string]any
}

// ServeHTTP answers one GraphQL-over-HTTP request. In order:
//
//  1. not POST: 405 with Allow: POST;
//  2. no, bad or revoked token, or one for another origin: 401
//     invalid_token with resource_metadata (bearer.WriteError);
//  3. not application/json: 415; body over MaxBodyBytes: 413; not a JSON
//     object with a string query: 400;
//  4. query over MaxQueryBytes, syntax or validation errors, depth,
//     unknown operationName, variables of the wrong type: 400;
//  5. a mutation without account:write, or a query without account:read:
//     403 insufficient_scope naming the scope (step-up), before anything
//     runs; a mutation that reads what it returns beyond ids (the marked
//     notification's contents, the subscription) needs account:read too;
//  6. root fields, selections, connections, nodes over Limits: 400; the
//     site's budget spent (Options.Budget, charged 1 first and the rest
//     of the cost here): 429 RATE_LIMITED with Retry-After;
//  7. the token's holder no longer has any role at the site: the 403 of
//     step 5, saying so (503 when the roles cannot be read);
//  8. execution: 200 with data (field errors beside it), or 503 when
//     storage is unavailable.
//
// Errors of steps 1, 3, 4 and 6 are GraphQL responses without data:
// {"errors":[{"message":...,"extensions":{"code":...}}]}. Steps 2, 5 and 7
// answer as every protected resource does (RFC 6750 §3 JSON and
// WWW-Authenticate).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		h.writeErrors(w, r, http.StatusMethodNotAllowed, requestError(CodeMethodNotAllowed,
			"the Member API answers POST only, with a JSON body {\"query\": ...}"))
		return
	}
	// A first unit of the site's budget before any work: a flood is
	// refused before tokens are verified or bodies read.
	if !h.charge(w, r, 1) {
		return
	}
	site, _ := tenant.FromContext(r.Context())
	tok, err := h.auth.Authenticate(r)
	if err != nil {
		bearer.WriteError(w, site, err)
		return
	}
	if site == nil { // the tenant middleware did not run: nothing to scope to
		tenant.WriteError(w, http.StatusNotFound, "not_found", "no site is served at this host")
		return
	}
	p, status, qe := h.readParams(w, r)
	if qe != nil {
		h.writeErrors(w, r, status, qe)
		return
	}
	if len(p.Query) > h.limits.MaxQueryBytes {
		h.writeErrors(w, r, http.StatusBadRequest, requestError(CodeQueryTooLarge,
			"the query is %d bytes long; at most %d are allowed", len(p.Query), h.limits.MaxQueryBytes))
		return
	}
	if errs := h.schema.ValidateWithVariables(p.Query, p.Variables); len(errs) > 0 {
		for _, e := range errs {
			withCode(e, validationCode(e))
		}
		h.writeErrors(w, r, http.StatusBadRequest, errs...)
		return
	}
	doc, err := parseDocument(p.Query)
	if err != nil {
		// graphql-go accepted what this reader did not: refuse rather than
		// run a query whose cost is unknown.
		h.log.WarnContext(r.Context(), "memberapi: query accepted by graphql-go but not by the limits' reader", "err", err)
		h.writeErrors(w, r, http.StatusBadRequest, requestError(CodeParseFailed, "the query could not be analysed: %v", err))
		return
	}
	op, err := doc.operation(p.OperationName)
	if err != nil {
		h.writeErrors(w, r, http.StatusBadRequest, requestError(CodeOperationResolution, "%v", err))
		return
	}
	if qe := checkVariables(op, p.Variables); qe != nil {
		h.writeErrors(w, r, http.StatusBadRequest, qe)
		return
	}
	var need []string
	switch op.typ {
	case opQuery:
		need = []string{scope.AccountRead}
	case opMutation:
		// __schema and __type are fields of the query root only (GraphQL
		// §4.1); graphql-go would run them at a mutation's root.
		if doc.selects(op.sels, 0, func(s *selection) bool { return s.name == "__schema" || s.name == "__type" }) {
			h.writeErrors(w, r, http.StatusBadRequest, requestError(CodeValidationFailed, "__schema and __type can be selected at the root of a query only, not of a mutation"))
			return
		}
		need = []string{scope.AccountWrite}
		if readsMutationResults(doc, op.sels) {
			need = []string{scope.AccountRead, scope.AccountWrite}
		}
	default:
		h.writeErrors(w, r, http.StatusBadRequest, requestError(CodeBadRequest, "the Member API has no subscriptions"))
		return
	}
	if err := tok.Require(need...); err != nil {
		bearer.WriteError(w, site, err)
		return
	}
	cost, qe := checkLimits(h.info, &h.limits, doc, op, p.Variables)
	if qe != nil {
		h.writeErrors(w, r, http.StatusBadRequest, qe)
		return
	}
	if !h.charge(w, r, cost-1) {
		return
	}
	// Tokens outlive role changes (an access token lives an hour and
	// refreshes do not re-check roles): whoever no longer holds a role at
	// the site is refused here, as at /mcp.
	roles, err := h.store.RolesAt(r.Context(), site.ID, tok.Subject)
	if err != nil {
		h.log.ErrorContext(r.Context(), "memberapi: roles", "err", err)
		bearer.WriteError(w, site, bearer.TemporarilyUnavailable(err))
		return
	}
	if !scope.RoleMayGrant(roles, scope.AudienceMember, need[0]) {
		e := bearer.InsufficientScope(need...)
		e.Description = "the person no longer holds a role at this site, which " + scope.Join(need) + " needs"
		bearer.WriteError(w, site, e)
		return
	}

	ctx, cancel := context.WithTimeout(r.Context(), h.limits.Timeout)
	defer cancel()
	rq := &request{store: h.store, now: h.now, site: site, token: tok}
	resp := h.schema.Exec(withRequest(ctx, rq), p.Query, p.OperationName, p.Variables)
	status = h.settle(r.Context(), resp)
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", retryAfter)
	}
	h.write(w, r, status, resp.Errors, resp.Data)
}

// readParams reads the JSON body: {"query", "operationName", "variables",
// "extensions"} (GraphQL over HTTP, POST).
func (h *Handler) readParams(w http.ResponseWriter, r *http.Request) (params, int, *gqlerrors.QueryError) {
	var p params
	mt, mparams, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != mediaJSON {
		return p, http.StatusUnsupportedMediaType, requestError(CodeUnsupportedMediaType,
			"the request body must be application/json")
	}
	if cs, ok := mparams["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return p, http.StatusUnsupportedMediaType, requestError(CodeUnsupportedMediaType,
			"the request body must be UTF-8 encoded")
	}
	tooLarge := requestError(CodePayloadTooLarge, "the request body exceeds %d bytes", h.limits.MaxBodyBytes)
	if r.ContentLength > h.limits.MaxBodyBytes {
		return p, http.StatusRequestEntityTooLarge, tooLarge
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.limits.MaxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return p, http.StatusRequestEntityTooLarge, tooLarge
		}
		return p, http.StatusBadRequest, requestError(CodeBadRequest, "the request body could not be read")
	}
	if b := bytes.TrimLeft(body, " \t\r\n"); len(b) > 0 && b[0] == '[' {
		return p, http.StatusBadRequest, requestError(CodeBadRequest, "batched requests are not supported: send one JSON object per request")
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil || raw == nil {
		return p, http.StatusBadRequest, requestError(CodeBadRequest, "the request body is not a JSON object")
	}
	if name, dup := jsonx.DuplicateKey(body); dup {
		// Read "last one wins", a repeated query could show a proxy one
		// operation and run another.
		return p, http.StatusBadRequest, requestError(CodeBadRequest, "the request body gives %q more than once", name)
	}
	if jsonx.BadText(body) {
		return p, http.StatusBadRequest, requestError(CodeBadRequest, "the request body is not valid UTF-8 text, or escapes half a UTF-16 surrogate pair")
	}
	isNull := func(m json.RawMessage) bool { return m == nil || string(m) == "null" }
	if isNull(raw["query"]) {
		return p, http.StatusBadRequest, requestError(CodeBadRequest, "the request has no query")
	}
	if err := json.Unmarshal(raw["query"], &p.Query); err != nil {
		return p, http.StatusBadRequest, requestError(CodeBadRequest, "query must be a string")
	}
	if strings.TrimSpace(p.Query) == "" {
		return p, http.StatusBadRequest, requestError(CodeBadRequest, "the request has no query")
	}
	if m := raw["operationName"]; !isNull(m) {
		if err := json.Unmarshal(m, &p.OperationName); err != nil {
			return p, http.StatusBadRequest, requestError(CodeBadRequest, "operationName must be a string")
		}
	}
	if m := raw["variables"]; !isNull(m) {
		if err := json.Unmarshal(m, &p.Variables); err != nil || p.Variables == nil {
			return p, http.StatusBadRequest, requestError(CodeBadRequest, "variables must be a JSON object")
		}
	}
	if m := raw["extensions"]; !isNull(m) {
		var ext map[string]any
		if err := json.Unmarshal(m, &ext); err != nil || ext == nil {
			return p, http.StatusBadRequest, requestError(CodeBadRequest, "extensions must be a JSON object")
		}
	}
	return p, 0, nil
}

// settle gives every error of an executed request a code, keeps internals
// out of messages, logs the causes (once, here at the edge) and returns the
// HTTP status: 503 when storage was unavailable, 400 when nothing ran
// (no data), else 200.
func (h *Handler) settle(ctx context.Context, resp *graphql.Response) int {
	status := http.StatusOK
	if resp.Data == nil {
		status = http.StatusBadRequest
	}
	// A batch that failed fails every node of its page with the same
	// error: log it once.
	logged := map[*fieldError]bool{}
	for _, e := range resp.Errors {
		var fe *fieldError
		switch {
		case errors.As(e.ResolverError, &fe):
			if logged[fe] {
				if fe.code == CodeUnavailable {
					status = http.StatusServiceUnavailable
				}
				continue
			}
			logged[fe] = true
			switch fe.code {
			case CodeUnavailable:
				status = http.StatusServiceUnavailable
				h.log.WarnContext(ctx, "memberapi: storage unavailable", "path", e.Path, "err", fe.cause)
			case CodeInternal:
				h.log.ErrorContext(ctx, "memberapi: resolver failed", "path", e.Path, "err", fe.cause)
			}
		case e.ResolverError != nil:
			// Resolvers return *fieldError only; anything else is a bug
			// whose text must not reach the client.
			h.log.ErrorContext(ctx, "memberapi: resolver failed", "path", e.Path, "err", e.ResolverError)
			e.Message, e.Extensions = "internal error", map[string]any{"code": CodeInternal}
		case errors.Is(e, context.DeadlineExceeded):
			status = http.StatusServiceUnavailable
			h.log.WarnContext(ctx, "memberapi: execution timed out", "path", e.Path)
			e.Message, e.Extensions = "the request took too long; try again shortly", map[string]any{"code": CodeUnavailable}
		case errors.Is(e, errTooManySelections):
			withCode(e, CodeQueryTooComplex)
		default:
			// graphql-go failed on its own (a value it could not coerce,
			// a null where the schema promises none): a bug of this
			// package, logged, its text kept from the client.
			h.log.ErrorContext(ctx, "memberapi: execution failed", "path", e.Path, "err", e.Message)
			e.Message, e.Extensions = "internal error", map[string]any{"code": CodeInternal}
		}
	}
	return status
}

// writeErrors answers a request that cannot be executed.
func (h *Handler) writeErrors(w http.ResponseWriter, r *http.Request, status int, errs ...*gqlerrors.QueryError) {
	h.write(w, r, status, errs, nil)
}

func (h *Handler) write(w http.ResponseWriter, r *http.Request, status int, errs []*gqlerrors.QueryError, data json.RawMessage) {
	body, err := json.Marshal(struct {
		Errors []*gqlerrors.QueryError `json:"errors,omitempty"`
		Data   json.RawMessage         `json:"data,omitempty"`
	}{errs, data})
	if err != nil {
		h.log.ErrorContext(r.Context(), "memberapi: encoding the response", "err", err)
		status = http.StatusInternalServerError
		body = []byte(`{"errors":[{"message":"internal error","extensions":{"code":"` + CodeInternal + `"}}]}`)
	}
	hdr := w.Header()
	hdr.Set("Content-Type", responseType(r.Header.Get("Accept"))+"; charset=utf-8")
	hdr.Set("Cache-Control", "no-store")
	hdr.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// responseType is application/graphql-response+json when the client lists
// it before application/json in Accept (GraphQL over HTTP §6.4.1), else
// application/json. The status codes are the same for both.
func responseType(accept string) string {
	for part := range strings.SplitSeq(accept, ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mt {
		case mediaGraphQLResponse:
			return mediaGraphQLResponse
		case mediaJSON:
			return mediaJSON
		}
	}
	return mediaJSON
}
