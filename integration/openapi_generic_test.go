package integration

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/lectern/lectern/authserver/scope"
	"github.com/lectern/lectern/vocab"
)

// An agent that reads only /openapi.json can call every operation of the
// administrative API. The test is that agent (genericClient): with an
// operator token holding every scope it builds, for each operation of the
// served document, a minimal request from the schemas alone and expects a
// 2xx; then it sends every request example the document gives and expects
// a 2xx too. An operation added with a schema that does not say what the
// handler requires (a required set, a format, a pattern, a bound, an enum)
// fails here with the 422 its handler answers.
func TestOpenAPIGenericClient(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, nil)
		origin := ts.academy()
		doc := openAPIDocument(t, ts, origin)
		if problems := openAPIUndocumented(doc); len(problems) > 0 {
			t.Fatalf("the document leaves a generic client guessing:\n%s", strings.Join(problems, "\n"))
		}
		tok := ts.ownerToken(t, origin, scope.OperatorScopes()...).AccessToken
		g := newGenericClient(t, ts, doc, origin, tok)
		ops := g.operations()
		if len(ops) < 80 {
			t.Fatalf("the document has %d operations; the admin API has more than 80", len(ops))
		}
		calls := 0
		for _, o := range ops {
			body, err := g.body(o)
			if err != nil {
				t.Errorf("%s: minimal body: %v", o, err)
				continue
			}
			r, err := g.call(o, body)
			calls++
			switch {
			case err != nil:
				t.Errorf("%s with a minimal request: %v", o, err)
			case r.status/100 != 2:
				t.Errorf("%s with a minimal request %s: %d %s", o, openAPIShow(body), r.status, r.body)
			}
			for name, ex := range openAPIRequestExamples(o.op) {
				body, err := g.withReferences(ex)
				if err != nil {
					t.Errorf("%s, example %s: %v", o, name, err)
					continue
				}
				r, err := g.call(o, body)
				calls++
				switch {
				case err != nil:
					t.Errorf("%s with its example %s: %v", o, name, err)
				case r.status/100 != 2:
					t.Errorf("%s with its example %s %s: %d %s", o, name, openAPIShow(body), r.status, r.body)
				}
			}
		}
		t.Logf("%d operations, %d calls of theirs (and the calls that created what they needed)", len(ops), calls)
	})
}

// openAPIDocument fetches and loads the served document, validating its
// examples against their schemas.
func openAPIDocument(t *testing.T, ts *testServer, origin string) *openapi3.T {
	t.Helper()
	status, _, raw := ts.get(t, origin, vocab.OpenAPIPath)
	if status != http.StatusOK {
		t.Fatalf("GET /openapi.json: %d", status)
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(context.Background(), openapi3.EnableExamplesValidation()); err != nil {
		t.Fatalf("the served document does not validate (examples included): %v", err)
	}
	return doc
}

// openAPIUndocumented lists what a generic client would lack: a JSON
// request body without an example, an error answer without one (an
// RFC 9457 problem document, or the RFC 6750 error of a token refusal).
// A multipart body whose file part the client generates needs none.
func openAPIUndocumented(doc *openapi3.T) []string {
	var out []string
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			where := method + " " + path
			if rb := op.RequestBody; rb != nil {
				if mt := rb.Value.Content.Get("application/json"); mt != nil && mt.Example == nil && len(mt.Examples) == 0 {
					out = append(out, where+": the JSON request body has no example")
				}
			}
			for code, resp := range op.Responses.Map() {
				n, err := strconv.Atoi(code)
				if err != nil || n < 400 {
					continue
				}
				if len(resp.Value.Content) == 0 {
					out = append(out, fmt.Sprintf("%s: answer %s has no content", where, code))
				}
				for ct, mt := range resp.Value.Content {
					if mt.Example == nil && len(mt.Examples) == 0 {
						out = append(out, fmt.Sprintf("%s: answer %s (%s) has no example", where, code, ct))
					}
					if ct == "application/problem+json" && (mt.Schema == nil || mt.Schema.Value.Properties["status"] == nil || mt.Schema.Value.Properties["type"] == nil) {
						out = append(out, fmt.Sprintf("%s: answer %s is not an RFC 9457 problem document", where, code))
					}
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// openAPIRequestExamples are the examples of an operation's JSON request
// body, by name.
func openAPIRequestExamples(op *openapi3.Operation) map[string]any {
	out := map[string]any{}
	if op.RequestBody == nil {
		return out
	}
	mt := op.RequestBody.Value.Content.Get("application/json")
	if mt == nil {
		return out
	}
	if mt.Example != nil {
		out["example"] = mt.Example
	}
	for name, ex := range mt.Examples {
		if ex.Value != nil && ex.Value.Value != nil {
			out[name] = ex.Value.Value
		}
	}
	return out
}

func openAPIShow(v any) string {
	if v == nil {
		return "(no body)"
	}
	return fmt.Sprintf("%v", v)
}

// The generic client's own rules, on a small document: a schema that does
// not say what its handler needs fails the walk.
func TestOpenAPIGenericClientBuildsFromSchemas(t *testing.T) {
	g := &genericClient{t: t, rng: nil, paramPaths: map[string]string{}}
	g.rng = newGenericRand()
	for _, tc := range []struct {
		name   string
		schema *openapi3.Schema
		check  func(any) bool
	}{
		{"slug pattern", &openapi3.Schema{Type: &openapi3.Types{"string"}, Pattern: `^[a-z0-9]+(-[a-z0-9]+)*$`, MaxLength: openapi3.Ptr[uint64](120)},
			func(v any) bool { s := v.(string); return s != "" && strings.ToLower(s) == s }},
		{"colour", &openapi3.Schema{Type: &openapi3.Types{"string"}, Pattern: `^#[0-9a-fA-F]{6}$`},
			func(v any) bool { return len(v.(string)) == 7 }},
		{"bounded integer", &openapi3.Schema{Type: &openapi3.Types{"integer"}, Min: openapi3.Ptr[float64](1), Max: openapi3.Ptr[float64](100)},
			func(v any) bool { return v.(int64) == 1 }},
		{"enum", &openapi3.Schema{Type: &openapi3.Types{"string"}, Enum: []any{"month", "year"}},
			func(v any) bool { return v == "month" }},
		{"oneOf of required sets takes the first", &openapi3.Schema{Type: &openapi3.Types{"object"},
			Required: []string{"code"},
			Properties: openapi3.Schemas{
				"code":           {Value: &openapi3.Schema{Type: &openapi3.Types{"string"}, Pattern: `^[A-Z]{3,8}$`}},
				"percentOff":     {Value: &openapi3.Schema{Type: &openapi3.Types{"integer"}, Min: openapi3.Ptr[float64](1)}},
				"amountOffCents": {Value: &openapi3.Schema{Type: &openapi3.Types{"integer"}, Min: openapi3.Ptr[float64](1)}},
			},
			OneOf: openapi3.SchemaRefs{{Value: &openapi3.Schema{Required: []string{"percentOff"}}}, {Value: &openapi3.Schema{Required: []string{"amountOffCents"}}}}},
			func(v any) bool {
				m := v.(map[string]any)
				_, amount := m["amountOffCents"]
				return m["percentOff"] == int64(1) && !amount && len(m["code"].(string)) >= 3
			}},
		{"under-specified: no required discount", &openapi3.Schema{Type: &openapi3.Types{"object"}, Required: []string{"code"},
			Properties: openapi3.Schemas{"code": {Value: &openapi3.Schema{Type: &openapi3.Types{"string"}}}, "percentOff": {Value: &openapi3.Schema{Type: &openapi3.Types{"integer"}}}}},
			// What the walk would send to the coupon handler, which
			// refuses it (422): the schema does not say a discount is
			// needed, so the minimal body has none.
			func(v any) bool { _, ok := v.(map[string]any)["percentOff"]; return !ok }},
	} {
		v, err := g.value(tc.schema, "", tc.name)
		if err != nil || !tc.check(v) {
			t.Errorf("%s: %v, %v", tc.name, v, err)
		}
		if tc.schema.Pattern != "" {
			if err := tc.schema.VisitJSON(v); err != nil {
				t.Errorf("%s: %v does not match its own schema: %v", tc.name, v, err)
			}
		}
	}
	// Pattern draws are unique: slugs and codes never collide in a run.
	seen := map[string]bool{}
	slug := &openapi3.Schema{Type: &openapi3.Types{"string"}, Pattern: `^[a-z0-9]+(-[a-z0-9]+)*$`}
	for range 200 {
		v, err := g.value(slug, "", "slug")
		if err != nil {
			t.Fatal(err)
		}
		if seen[v.(string)] {
			t.Fatalf("slug %q drawn twice in 200 draws", v)
		}
		seen[v.(string)] = true
	}
}
