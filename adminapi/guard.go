package adminapi

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"mime"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/lectern/lectern/authserver/bearer"
	"github.com/lectern/lectern/authserver/scope"
	"github.com/lectern/lectern/internal/jsonx"
	"github.com/lectern/lectern/tenant"
)

// routeKey names an echo route: "GET /api/v1/courses/:courseId".
func routeKey(method, path string) string { return method + " " + path }

// echoPath turns an OpenAPI path template into echo's: {id} → :id.
func echoPath(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '{':
			b.WriteByte(':')
		case '}':
		default:
			b.WriteByte(p[i])
		}
	}
	return b.String()
}

// guard runs before every operation. In order:
//
//  1. the scopes the document's security names for the route (a route the
//     document does not name is 404: nothing is reachable that is not
//     declared);
//  2. the bearer token of this site (401 invalid_token, the verifier's
//     answer, also for tokens of other sites);
//  3. the token's scopes (403 insufficient_scope with WWW-Authenticate);
//  4. the caller's roles at the site now (403 problem): a person whose role
//     was removed, or a lecturer with a scope a lecturer may not grant, is
//     refused at once, whatever the token says;
//  5. Idempotency-Key on POST;
//  6. the operation, whose errors are answered as problem documents.
func (h *Handler) guard(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		site, ok := tenant.FromContext(r.Context())
		if !ok {
			return h.writeError(c, errNotFound("no site is served at this host"))
		}
		need, known := h.doc.scopes[routeKey(r.Method, c.Path())]
		if !known {
			if allow := h.doc.allowed(r.URL.Path); len(allow) > 0 {
				c.Response().Header().Set("Allow", strings.Join(allow, ", "))
				return h.writeError(c, &problem{Status: http.StatusMethodNotAllowed, Detail: "this path allows " + strings.Join(allow, ", ")})
			}
			return h.writeError(c, errNotFound("no such operation: see /openapi.json"))
		}
		tok, err := h.verifier.Authenticate(r)
		if err != nil {
			bearer.WriteError(c.Response(), site, err)
			return nil
		}
		if err := tok.Require(need...); err != nil {
			bearer.WriteError(c.Response(), site, err)
			return nil
		}
		roles, err := h.store.RolesAt(r.Context(), site.ID, tok.Subject)
		if err != nil {
			return h.writeError(c, err)
		}
		for _, s := range need {
			if !scope.RoleMayGrant(roles, scope.AudienceOperator, s) {
				return h.writeError(c, &problem{Status: http.StatusForbidden, Type: typeRoleRequired, Title: "Role required",
					Detail: "the token's holder has no role at this site that allows " + s})
			}
		}
		if err := h.checkBodyType(r, c.Path()); err != nil {
			return h.writeError(c, err)
		}
		ctx := withCaller(r.Context(), &caller{site: site, token: tok, roles: roles, ip: tenant.ClientIP(r)})
		c.SetRequest(r.WithContext(ctx))
		if r.Method == http.MethodPost && r.Header.Get(idempotencyHeader) != "" {
			return h.idempotent(c, next)
		}
		if err := next(c); err != nil {
			return h.writeError(c, err)
		}
		return nil
	}
}

// checkBodyType refuses a request body of a media type the operation does
// not declare (415): echo's binder would otherwise read a form body into
// the JSON structure as if it were empty.
func (h *Handler) checkBodyType(r *http.Request, path string) error {
	key := routeKey(r.Method, path)
	types, ok := h.doc.bodyTypes[key]
	if !ok {
		return nil
	}
	if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
		if h.doc.bodyNeeded[key] {
			return errBadRequest("this operation needs a request body", InvalidField{Field: "body", Message: "is required"})
		}
		return nil
	}
	ct := r.Header.Get("Content-Type")
	mt, params, _ := mime.ParseMediaType(ct)
	if !slices.Contains(types, mt) {
		return &problem{Status: http.StatusUnsupportedMediaType, Detail: "send the body as " + strings.Join(types, " or ")}
	}
	if !strings.HasPrefix(ct, mt) {
		// Media types are case-insensitive (RFC 9110 §8.3.1), echo's
		// binder compares them as they are: APPLICATION/JSON reaches it
		// spelled as declared.
		if f := mime.FormatMediaType(mt, params); f != "" {
			r.Header.Set("Content-Type", f)
		}
	}
	if mt != "application/json" {
		return nil
	}
	// The generated code decodes the first JSON value and ignores what
	// follows; a body that is not exactly one JSON value is refused here,
	// before anything acts on half of it. (JSON bodies are under the
	// server's 1 MiB limit.)
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	if !json.Valid(body) {
		return errBadRequest("the body is not one well-formed JSON value", InvalidField{Field: "body", Message: "is not one JSON value"})
	}
	if path, dup := jsonx.DuplicatePath(body); dup {
		return errBadRequest("the body gives a member more than once", InvalidField{Field: path, Message: "is given more than once"})
	}
	if nonNull, ok := h.doc.objectBody[key]; ok {
		// The generated decoder reads null as "left out", and a body of
		// null as {}: a PATCH {"title": null} would answer 200 having
		// changed nothing. Null is refused where the schema does not
		// allow it, as a member of another type is.
		var members map[string]json.RawMessage
		if json.Unmarshal(body, &members) != nil || members == nil {
			return errBadRequest("the body must be a JSON object", InvalidField{Field: "body", Message: "must be a JSON object"})
		}
		for _, name := range slices.Sorted(maps.Keys(members)) {
			if nonNull[name] && string(members[name]) == "null" {
				return errBadRequest("a field has the wrong type", InvalidField{Field: name, Message: "must not be null"})
			}
		}
		for _, name := range h.doc.integerMaps[key] {
			if f, ok := notIntegers(name, members[name]); !ok {
				return errBadRequest("a field has the wrong type", InvalidField{Field: f, Message: "must be an integer"})
			}
		}
	}
	if jsonx.BadText(body) {
		// Decoded, such text would turn into U+FFFD and not read back as
		// sent.
		return errBadRequest("the body is not valid UTF-8 text, or escapes half a UTF-16 surrogate pair",
			InvalidField{Field: "body", Message: "is not valid UTF-8 text"})
	}
	return nil
}

// allowed returns the methods the document declares for a request path
// (for 405 answers), or none when no path template matches it.
func (d *document) allowed(path string) []string {
	segs := strings.Split(strings.TrimPrefix(path, BasePath), "/")
	var out []string
	for _, op := range d.operations {
		tmpl := strings.Split(op.Path, "/")
		if len(tmpl) != len(segs) {
			continue
		}
		match := true
		for i, t := range tmpl {
			if t != segs[i] && !(strings.HasPrefix(t, "{") && segs[i] != "") {
				match = false
				break
			}
		}
		if match && !slices.Contains(out, op.Method) {
			out = append(out, op.Method)
		}
	}
	sort.Strings(out)
	return out
}

// notIntegers checks the values of a member that maps names to integers
// (document.integerMaps): each must be a whole number that fits the
// decoder's int. The decoder would refuse 1.5 or 1e30 too, but names only
// the member ("overrides") and calls them not numbers. It returns the
// first wrong value's field, name.key, and false; a member that is not an
// object is left to the decoder.
func notIntegers(name string, raw json.RawMessage) (string, bool) {
	var values map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &values) != nil {
		return "", true
	}
	for _, k := range slices.Sorted(maps.Keys(values)) {
		v := bytes.TrimSpace(values[k])
		if string(v) == "null" {
			continue // as null elsewhere: the decoder's and the handler's
		}
		if _, err := strconv.ParseInt(string(v), 10, 64); err != nil {
			return name + "." + k, false
		}
	}
	return "", true
}
