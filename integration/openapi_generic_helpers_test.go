package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"regexp"
	"regexp/syntax"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
)

// genericClient calls an API knowing nothing but its OpenAPI document: it
// builds every value from a schema (required properties only; the first
// branch of oneOf/anyOf; strings from enum, example, format, pattern and
// length bounds; numbers from their bounds) and finds the values of path
// parameters the way a person reading the document would, from the paths
// themselves:
//
//   - a parameter that follows a literal segment, /X/{p}, names a member of
//     the collection X: a path ending in /X. If that collection can be
//     created (POST), a fresh member is created for each use (so deleting
//     it or changing its state disturbs nothing else); otherwise the first
//     member of its list (GET) is used. Of the member, the property named
//     like the parameter is taken, else "id".
//   - a body property named like a path parameter ({courseId} → courseId)
//     refers to that collection's members in the same way.
//   - a parameter with an enum takes its first value.
//   - x-create-with on a parameter lists properties the member must be
//     created with (the document's way to state a precondition such as
//     "a confidential application").
//
// Every request it sends is first validated against the document, and
// every answer too (openapi3filter), so a generator mistake or an answer
// the document does not describe fails as well.
type genericClient struct {
	t      *testing.T
	ts     *testServer
	doc    *openapi3.T
	origin string // the site; paths are under origin + base
	base   string // the server URL's path, /api/v1
	token  string
	rng    *rand.Rand
	n      int // makes generated values unique

	// paramPaths: for each path parameter name, a path template it appears
	// in (body properties named like it resolve as that path's parameter).
	paramPaths map[string]string
}

func newGenericClient(t *testing.T, ts *testServer, doc *openapi3.T, origin, token string) *genericClient {
	u, err := url.Parse(doc.Servers[0].URL)
	if err != nil {
		t.Fatal(err)
	}
	g := &genericClient{t: t, ts: ts, doc: doc, origin: origin, base: u.Path, token: token,
		rng: newGenericRand(), paramPaths: map[string]string{}}
	paths := doc.Paths.InMatchingOrder()
	sort.Strings(paths)
	for _, path := range paths {
		segs := strings.Split(path, "/")
		for i := 1; i < len(segs); i++ {
			name, ok := pathParam(segs[i])
			if _, prevIsParam := pathParam(segs[i-1]); !ok || prevIsParam || g.collection(segs[i-1]) == nil {
				continue
			}
			if _, seen := g.paramPaths[name]; !seen {
				g.paramPaths[name] = path
			}
		}
	}
	return g
}

func pathParam(seg string) (string, bool) {
	if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
		return seg[1 : len(seg)-1], true
	}
	return "", false
}

// operation is one operation of the document.
type operation struct {
	method, path string
	item         *openapi3.PathItem
	op           *openapi3.Operation
}

func (o operation) String() string { return o.method + " " + o.path + " (" + o.op.OperationID + ")" }

func (g *genericClient) operations() []operation {
	var out []operation
	paths := g.doc.Paths.Map()
	keys := make([]string, 0, len(paths))
	for k := range paths {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, p := range keys {
		item := paths[p]
		for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
			if op := item.GetOperation(m); op != nil {
				out = append(out, operation{method: m, path: p, item: item, op: op})
			}
		}
	}
	return out
}

func (g *genericClient) find(method, path string) *operation {
	item := g.doc.Paths.Find(path)
	if item == nil || item.GetOperation(method) == nil {
		return nil
	}
	return &operation{method: method, path: path, item: item, op: item.GetOperation(method)}
}

// parameters are the operation's parameters, the path item's included.
func (o operation) parameters() openapi3.Parameters {
	return append(append(openapi3.Parameters{}, o.item.Parameters...), o.op.Parameters...)
}

// reply is an answer, decoded when it is JSON.
type reply struct {
	status int
	body   []byte
	json   map[string]any
}

// call sends the operation with body (nil: none) and extra properties to
// create path members with; it returns the answer, validated against the
// document.
func (g *genericClient) call(o operation, body any) (*reply, error) {
	pathValues := map[string]string{}
	query := url.Values{}
	for _, pr := range o.parameters() {
		p := pr.Value
		switch {
		case p.In == openapi3.ParameterInPath:
			v, err := g.pathValue(o, p)
			if err != nil {
				return nil, fmt.Errorf("path parameter %s: %w", p.Name, err)
			}
			pathValues[p.Name] = v
		case p.In == openapi3.ParameterInQuery && p.Required:
			v, err := g.value(p.Schema.Value, p.Name, "query "+p.Name)
			if err != nil {
				return nil, err
			}
			query.Set(p.Name, fmt.Sprint(v))
		case p.Required:
			return nil, fmt.Errorf("required %s parameter %s: this client sends none", p.In, p.Name)
		}
	}
	path := o.path
	for k, v := range pathValues {
		path = strings.ReplaceAll(path, "{"+k+"}", url.PathEscape(v))
	}
	u := g.origin + g.base + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	var raw []byte
	contentType := ""
	if body != nil {
		var err error
		if raw, contentType, err = g.encode(o, body); err != nil {
			return nil, err
		}
	}
	req, err := http.NewRequest(o.method, u, bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	if body == nil {
		req.Body = http.NoBody
	}
	req.Header.Set("Authorization", "Bearer "+g.token)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	route := &routers.Route{Spec: g.doc, Path: o.path, PathItem: o.item, Method: o.method, Operation: o.op}
	opts := &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: pathValues, Route: route, Options: opts}
	if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
		return nil, fmt.Errorf("the request this client built does not match the document: %w\nbody: %s", err, raw)
	}
	req.Body = http.NoBody
	if body != nil {
		req.Body = io.NopCloser(bytes.NewReader(raw))
	}
	resp, err := g.ts.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := &reply{status: resp.StatusCode}
	if out.body, err = io.ReadAll(resp.Body); err != nil {
		return nil, err
	}
	if strings.Contains(resp.Header.Get("Content-Type"), "json") && len(out.body) > 0 {
		_ = json.Unmarshal(out.body, &out.json)
	}
	check := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: resp.StatusCode, Header: resp.Header,
		Body: io.NopCloser(bytes.NewReader(out.body)), Options: opts}
	if err := openapi3filter.ValidateResponse(context.Background(), check); err != nil {
		return out, fmt.Errorf("the answer (%d) does not match the document: %w\nbody: %s", resp.StatusCode, err, out.body)
	}
	return out, nil
}

// encode writes body in the operation's request media type: JSON, or a
// multipart form whose binary parts are generated files.
func (g *genericClient) encode(o operation, body any) ([]byte, string, error) {
	content := o.op.RequestBody.Value.Content
	if mt := content.Get("application/json"); mt != nil {
		b, err := json.Marshal(body)
		return b, "application/json", err
	}
	mt := content.Get("multipart/form-data")
	if mt == nil {
		return nil, "", fmt.Errorf("no media type this client can send in %v", content)
	}
	fields, _ := body.(map[string]any)
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for _, name := range sortedMapKeys(fields) {
		prop := mt.Schema.Value.Properties[name]
		if prop != nil && prop.Value.Format == "binary" {
			partType := "application/octet-stream"
			if enc := mt.Encoding[name]; enc != nil && enc.ContentType != "" {
				partType = strings.TrimSpace(strings.Split(enc.ContentType, ",")[0])
			}
			data, err := fileOfType(partType)
			if err != nil {
				return nil, "", fmt.Errorf("part %s: %w", name, err)
			}
			h := textproto.MIMEHeader{}
			h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q; filename="generated"`, name))
			h.Set("Content-Type", partType)
			pw, _ := w.CreatePart(h)
			_, _ = pw.Write(data)
			continue
		}
		_ = w.WriteField(name, fmt.Sprint(fields[name]))
	}
	_ = w.Close()
	return buf.Bytes(), w.FormDataContentType(), nil
}

// fileOfType makes a small valid file of a media type.
func fileOfType(mediaType string) ([]byte, error) {
	switch mediaType {
	case "image/png":
		var b bytes.Buffer
		err := png.Encode(&b, image.NewRGBA(image.Rect(0, 0, 2, 2)))
		return b.Bytes(), err
	case "application/pdf":
		return []byte("%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"), nil
	}
	return nil, fmt.Errorf("this client cannot make a file of type %s", mediaType)
}

// pathValue finds a value for a path parameter of o (see genericClient).
func (g *genericClient) pathValue(o operation, p *openapi3.Parameter) (string, error) {
	segs := strings.Split(o.path, "/")
	for i, seg := range segs {
		if name, ok := pathParam(seg); ok && name == p.Name && i > 0 {
			if _, isParam := pathParam(segs[i-1]); !isParam {
				if coll := g.collection(segs[i-1]); coll != nil {
					with, _ := p.Extensions["x-create-with"].(map[string]any)
					v, err := g.member(*coll, p.Name, with)
					if err != nil {
						return "", err
					}
					return fmt.Sprint(v), nil
				}
			}
		}
	}
	if p.Schema != nil && len(p.Schema.Value.Enum) > 0 {
		return fmt.Sprint(p.Schema.Value.Enum[0]), nil
	}
	return "", fmt.Errorf("no collection provides it and it has no enum")
}

// collection is the path that lists or creates members named by the literal
// segment seg: a path ending in /seg, with POST if any has one, else GET.
func (g *genericClient) collection(seg string) *operation {
	var list *operation
	for _, path := range g.doc.Paths.InMatchingOrder() {
		if !strings.HasSuffix(path, "/"+seg) {
			continue
		}
		if o := g.find(http.MethodPost, path); o != nil {
			return o
		}
		if o := g.find(http.MethodGet, path); o != nil && list == nil {
			list = o
		}
	}
	return list
}

// member returns the property key (else "id") of a fresh member of the
// collection, created with with added to the minimal body, or of the first
// listed member of a collection that cannot be created.
func (g *genericClient) member(coll operation, key string, with map[string]any) (any, error) {
	var obj map[string]any
	if coll.method == http.MethodPost {
		var body any
		if rb := coll.op.RequestBody; rb != nil {
			b, err := g.body(coll)
			if err != nil {
				return nil, err
			}
			if m, ok := b.(map[string]any); ok {
				for k, v := range with {
					m[k] = v
				}
			}
			body = b
		}
		r, err := g.call(coll, body)
		if err != nil {
			return nil, fmt.Errorf("creating a member of %s: %w", coll.path, err)
		}
		if r.status/100 != 2 {
			return nil, fmt.Errorf("creating a member of %s: %d %s", coll.path, r.status, r.body)
		}
		obj = r.json
	} else {
		r, err := g.call(coll, nil)
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", coll.path, err)
		}
		items, _ := r.json["items"].([]any)
		if r.status != http.StatusOK || len(items) == 0 {
			return nil, fmt.Errorf("listing %s: %d, no member to use (%s)", coll.path, r.status, r.body)
		}
		obj, _ = items[0].(map[string]any)
	}
	if v, ok := obj[key]; ok {
		return jsonID(v), nil
	}
	if v, ok := obj["id"]; ok {
		return jsonID(v), nil
	}
	return nil, fmt.Errorf("a member of %s has neither %s nor id: %v", coll.path, key, obj)
}

// jsonID keeps integer IDs integers (JSON numbers decode as float64).
func jsonID(v any) any {
	if f, ok := v.(float64); ok && f == float64(int64(f)) {
		return int64(f)
	}
	return v
}

// body builds the minimal request body of o, or nil when the body is
// optional (a minimal request sends none).
func (g *genericClient) body(o operation) (any, error) {
	rb := o.op.RequestBody
	if rb == nil || !rb.Value.Required {
		return nil, nil
	}
	for _, mt := range []string{"application/json", "multipart/form-data"} {
		if m := rb.Value.Content.Get(mt); m != nil {
			return g.value(m.Schema.Value, "", o.op.OperationID+" body")
		}
	}
	return nil, fmt.Errorf("%s: no media type this client can send", o)
}

// withReferences replaces, in an example, the properties that name members
// of a collection (courseId: 1) with members this run created: an
// example's IDs are the document's illustration, not this site's.
func (g *genericClient) withReferences(v any) (any, error) {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, val := range x {
			if path, ok := g.paramPaths[k]; ok {
				id, err := g.reference(k, path)
				if err != nil {
					return nil, err
				}
				out[k] = id
				continue
			}
			nv, err := g.withReferences(val)
			if err != nil {
				return nil, err
			}
			out[k] = nv
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i := range x {
			nv, err := g.withReferences(x[i])
			if err != nil {
				return nil, err
			}
			out[i] = nv
		}
		return out, nil
	}
	return v, nil
}

// reference resolves a body property named like the path parameter name
// as that parameter of path.
func (g *genericClient) reference(name, path string) (any, error) {
	for _, m := range []string{http.MethodGet, http.MethodPatch, http.MethodDelete, http.MethodPost, http.MethodPut} {
		o := g.find(m, path)
		if o == nil {
			continue
		}
		for _, pr := range o.parameters() {
			if pr.Value.Name == name && pr.Value.In == openapi3.ParameterInPath {
				v, err := g.pathValue(*o, pr.Value)
				if err != nil {
					return nil, err
				}
				if i, err := strconv.ParseInt(v, 10, 64); err == nil {
					return i, nil
				}
				return v, nil
			}
		}
	}
	return nil, fmt.Errorf("%s: no operation of %s has it as a parameter", name, path)
}

// value builds the minimal value of a schema. name is the property's name
// (a reference when it names a path parameter); where says what is built,
// for errors.
func (g *genericClient) value(s *openapi3.Schema, name, where string) (any, error) {
	if path, ok := g.paramPaths[name]; ok && name != "" {
		return g.reference(name, path)
	}
	switch {
	case len(s.AllOf) > 0:
		merged := map[string]any{}
		for _, sub := range s.AllOf {
			v, err := g.value(sub.Value, name, where)
			if err != nil {
				return nil, err
			}
			m, ok := v.(map[string]any)
			if !ok {
				return v, nil
			}
			for k, x := range m {
				merged[k] = x
			}
		}
		return merged, nil
	case len(s.OneOf) > 0 || len(s.AnyOf) > 0:
		branches := s.OneOf
		if len(branches) == 0 {
			branches = s.AnyOf
		}
		first := branches[0].Value
		if len(s.Properties) == 0 && s.Type == nil {
			return g.value(first, name, where)
		}
		// Properties beside the branches: the object with the first
		// branch's requirements added.
		merged := *s
		merged.OneOf, merged.AnyOf = nil, nil
		merged.Required = append(slices.Clone(s.Required), first.Required...)
		merged.Properties = openapi3.Schemas{}
		for k, v := range s.Properties {
			merged.Properties[k] = v
		}
		for k, v := range first.Properties {
			merged.Properties[k] = v
		}
		return g.value(&merged, name, where)
	case len(s.Enum) > 0:
		return s.Enum[0], nil
	case s.Example != nil && !s.Type.Is(openapi3.TypeObject) && !s.Type.Is(openapi3.TypeArray):
		return s.Example, nil
	}
	g.n++
	switch {
	case s.Type.Is(openapi3.TypeObject) || (s.Type == nil && len(s.Properties) > 0):
		out := map[string]any{}
		req := slices.Clone(s.Required)
		sort.Strings(req)
		for _, k := range slices.Compact(req) {
			prop := s.Properties[k]
			if prop == nil {
				return nil, fmt.Errorf("%s: required property %s has no schema", where, k)
			}
			if prop.Value.ReadOnly {
				continue
			}
			v, err := g.value(prop.Value, k, where+"."+k)
			if err != nil {
				return nil, err
			}
			out[k] = v
		}
		return out, nil
	case s.Type.Is(openapi3.TypeArray):
		out := []any{}
		for range s.MinItems {
			v, err := g.value(s.Items.Value, "", where+"[]")
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case s.Type.Is(openapi3.TypeInteger) || s.Type.Is(openapi3.TypeNumber):
		v := 1.0
		if s.Min != nil {
			v = *s.Min
			if b := s.ExclusiveMin.Bool; b != nil && *b {
				v++
			}
		} else if s.Max != nil && *s.Max < v {
			v = *s.Max
		}
		if s.Type.Is(openapi3.TypeInteger) {
			return int64(v), nil
		}
		return v, nil
	case s.Type.Is(openapi3.TypeBoolean):
		if b, ok := s.Default.(bool); ok {
			return b, nil
		}
		return false, nil
	case s.Type.Is(openapi3.TypeString):
		return g.stringValue(s, where)
	}
	return nil, fmt.Errorf("%s: this client cannot build a value of %v", where, s.Type)
}

// stringValue builds a string from a schema's format, pattern and length
// bounds, unique per call.
func (g *genericClient) stringValue(s *openapi3.Schema, where string) (string, error) {
	var candidates []string
	switch s.Format {
	case "date-time":
		// In the future: "a date in the future" is the common rule
		// (expiries, periods, events), and a future date is valid where
		// any date is.
		return time.Now().UTC().Add(30*24*time.Hour + time.Duration(g.n)*time.Second).Truncate(time.Second).Format(time.RFC3339), nil
	case "date":
		return time.Now().UTC().Add(30 * 24 * time.Hour).Format(time.DateOnly), nil
	case "email":
		candidates = append(candidates, fmt.Sprintf("generic%d@example.test", g.n))
	case "uri", "url":
		candidates = append(candidates, fmt.Sprintf("https://example.test/generic/%d", g.n))
	case "binary":
		return "", nil // a file part: encode makes it
	}
	var re *regexp.Regexp
	if s.Pattern != "" {
		var err error
		if re, err = regexp.Compile(s.Pattern); err != nil {
			return "", fmt.Errorf("%s: pattern %q: %w", where, s.Pattern, err)
		}
	}
	if len(candidates) == 0 && re == nil {
		candidates = append(candidates, fmt.Sprintf("Generic value %d", g.n))
	}
	for range 50 {
		if re != nil && len(candidates) == 0 {
			c, err := g.fromPattern(s.Pattern)
			if err != nil {
				return "", fmt.Errorf("%s: %w", where, err)
			}
			candidates = append(candidates, c)
		}
		c := candidates[0]
		candidates = candidates[1:]
		n := uint64(utf8.RuneCountInString(c))
		if n < s.MinLength {
			c += strings.Repeat("x", int(s.MinLength-n))
		}
		if s.MaxLength != nil && uint64(utf8.RuneCountInString(c)) > *s.MaxLength {
			c = string([]rune(c)[:*s.MaxLength])
		}
		if re == nil || re.MatchString(c) {
			return c, nil
		}
	}
	return "", fmt.Errorf("%s: no string satisfies format %q, pattern %q and the length bounds", where, s.Format, s.Pattern)
}

// fromPattern draws a string the regular expression matches: the first
// alternative of each choice, a few repetitions of each loop, characters
// of each class drawn at random (letters and digits first), so values are
// unique where a field must be.
func (g *genericClient) fromPattern(pattern string) (string, error) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	g.draw(&b, re.Simplify())
	return b.String(), nil
}

const preferredRunes = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"

func (g *genericClient) draw(b *strings.Builder, re *syntax.Regexp) {
	repeat := func(min, max int) int {
		hi := min + 4
		if max >= 0 && max < hi {
			hi = max
		}
		if hi <= min {
			return min
		}
		return min + g.rng.IntN(hi-min+1)
	}
	switch re.Op {
	case syntax.OpLiteral:
		b.WriteString(string(re.Rune))
	case syntax.OpCharClass:
		var in []rune
		for _, r := range preferredRunes {
			for i := 0; i+1 < len(re.Rune); i += 2 {
				if r >= re.Rune[i] && r <= re.Rune[i+1] {
					in = append(in, r)
					break
				}
			}
		}
		if len(in) > 0 {
			b.WriteRune(in[g.rng.IntN(len(in))])
			return
		}
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for r := re.Rune[i]; r <= re.Rune[i+1] && r < 0x10000; r++ {
				if r >= 0x20 && r != 0x7f && !(r >= 0x80 && r <= 0x9f) {
					b.WriteRune(r)
					return
				}
			}
		}
		if len(re.Rune) > 0 {
			b.WriteRune(re.Rune[0])
		}
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		b.WriteRune(rune(preferredRunes[g.rng.IntN(26)]))
	case syntax.OpCapture:
		g.draw(b, re.Sub[0])
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			g.draw(b, sub)
		}
	case syntax.OpAlternate:
		g.draw(b, re.Sub[0])
	case syntax.OpStar:
		for range repeat(1, -1) {
			g.draw(b, re.Sub[0])
		}
	case syntax.OpPlus:
		for range repeat(2, -1) {
			g.draw(b, re.Sub[0])
		}
	case syntax.OpQuest:
	case syntax.OpRepeat:
		for range repeat(max(re.Min, 1), re.Max) {
			g.draw(b, re.Sub[0])
		}
	}
}

func sortedMapKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// newGenericRand is the client's source of variety; the seed is fixed so a
// failing walk repeats, and the counter in each value keeps them unique.
func newGenericRand() *rand.Rand { return rand.New(rand.NewPCG(1, 2)) }
