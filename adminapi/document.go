package adminapi

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"github.com/lectern/lectern/authserver/scope"
	"github.com/lectern/lectern/tenant"
	"github.com/lectern/lectern/vocab"
)

// SourceYAML is the OpenAPI 3.0 document the server code is generated from.
//
//go:embed openapi.yaml
var SourceYAML []byte

// The authorization server's endpoints, relative to the origin.
const (
	authorizePath = vocab.AuthorizePath
	tokenPath     = vocab.TokenPath
)

// originPlaceholder stands for the site's origin in the prepared document.
// The .invalid TLD (RFC 2606) cannot be a real origin, so replacing it
// cannot touch anything else.
const originPlaceholder = "https://origin.lectern.invalid"

// Operation is one operation of the document.
type Operation struct {
	Method      string // GET, POST, ...
	Path        string // the document's path template, e.g. /courses/{courseId}
	OperationID string
	Scopes      []string // the one security requirement's scopes
}

// document is the parsed source: the JSON served (with the origin
// placeholder), the operations, and the scopes each route needs.
type document struct {
	json       []byte
	operations []Operation
	scopes     map[string][]string // by routeKey(method, BasePath+echoPath(path))
	bodyTypes  map[string][]string // the request body's media types, by route
	bodyNeeded map[string]bool     // routes whose request body is required
	// objectBody holds, for a route whose JSON body is an object, its
	// members that may not be null (all but the nullable ones).
	objectBody map[string]map[string]bool
	// integerMaps holds, for such a route, its members that map names to
	// integers (additionalProperties: integer, as PUT /limits's
	// overrides): a wrong value is named with its key, which the
	// decoder's error leaves out.
	integerMaps map[string][]string

	mu    sync.Mutex
	sites map[string]*siteDocument // by origin
	order []string                 // insertion order, for eviction
}

// siteDocument is the document of one site, ready to serve.
type siteDocument struct {
	body []byte
	etag string
}

// maxSiteDocuments bounds the per-site cache: the documents differ only in
// three URLs, so a miss costs one copy with replacements.
const maxSiteDocuments = 1024

var parsed = sync.OnceValues(func() (*document, error) { return parseDocument(SourceYAML) })

// newDocument returns the parsed embedded document. The document is part of
// the binary and tested; a broken one is a build defect.
func newDocument() *document {
	d, err := parsed()
	if err != nil {
		panic("adminapi: openapi.yaml: " + err.Error())
	}
	return &document{json: d.json, operations: d.operations, scopes: d.scopes, bodyTypes: d.bodyTypes, bodyNeeded: d.bodyNeeded,
		objectBody: d.objectBody, integerMaps: d.integerMaps, sites: map[string]*siteDocument{}}
}

var methods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// parseDocument reads the source, checks that every operation declares
// exactly one security requirement of operator scopes, and prepares the
// JSON form: server URL and OAuth endpoints at the origin placeholder, and
// every operator scope with its description.
func parseDocument(src []byte) (*document, error) {
	var root map[string]any
	if err := yaml.Unmarshal(src, &root); err != nil {
		return nil, err
	}
	d := &document{scopes: map[string][]string{}, bodyTypes: map[string][]string{}, bodyNeeded: map[string]bool{}, objectBody: map[string]map[string]bool{},
		integerMaps: map[string][]string{}}
	paths, _ := root["paths"].(map[string]any)
	for _, p := range sortedKeys(paths) {
		item, _ := paths[p].(map[string]any)
		for _, m := range methods {
			op, ok := item[m].(map[string]any)
			if !ok {
				continue
			}
			id, _ := op["operationId"].(string)
			scopes, err := operationScopes(op)
			if err != nil {
				return nil, fmt.Errorf("%s %s (%s): %w", strings.ToUpper(m), p, id, err)
			}
			d.operations = append(d.operations, Operation{Method: strings.ToUpper(m), Path: p, OperationID: id, Scopes: scopes})
			key := routeKey(strings.ToUpper(m), BasePath+echoPath(p))
			d.scopes[key] = scopes
			if rb, ok := op["requestBody"].(map[string]any); ok {
				content, _ := rb["content"].(map[string]any)
				d.bodyTypes[key] = sortedKeys(content)
				d.bodyNeeded[key], _ = rb["required"].(bool)
				if js, ok := content["application/json"].(map[string]any); ok {
					if schema := resolve(root, js["schema"]); schema["type"] == "object" {
						d.objectBody[key] = nonNullMembers(root, schema)
						if m := integerMapMembers(root, schema); len(m) > 0 {
							d.integerMaps[key] = m
						}
					}
				}
			}
		}
	}
	root["servers"] = []any{map[string]any{"url": originPlaceholder + BasePath, "description": "This site's administrative API"}}
	flow, err := lookup(root, "components", "securitySchemes", "oauth2", "flows", "authorizationCode")
	if err != nil {
		return nil, err
	}
	flow["authorizationUrl"] = originPlaceholder + authorizePath
	flow["tokenUrl"] = originPlaceholder + tokenPath
	all := map[string]any{}
	for _, s := range scope.All() {
		if s.Audience == scope.AudienceOperator {
			all[s.Name] = s.Description
		}
	}
	flow["scopes"] = all
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(root); err != nil {
		return nil, err
	}
	d.json = buf.Bytes()
	return d, nil
}

// resolve follows a schema's $ref ('#/components/schemas/Name') within
// root; a schema without one is itself.
func resolve(root map[string]any, schema any) map[string]any {
	s, _ := schema.(map[string]any)
	for range 8 { // a chain of references, never a cycle in our document
		ref, ok := s["$ref"].(string)
		if !ok {
			return s
		}
		name, found := strings.CutPrefix(ref, "#/components/schemas/")
		if !found {
			return nil
		}
		schemas, _ := lookup(root, "components", "schemas")
		s, _ = schemas[name].(map[string]any)
	}
	return s
}

// nonNullMembers are the properties of an object schema that are not
// nullable.
// integerMapMembers names the members of an object schema that are
// objects of integers (additionalProperties: {type: integer}), sorted.
func integerMapMembers(root, schema map[string]any) []string {
	props, _ := schema["properties"].(map[string]any)
	var out []string
	for name, p := range props {
		ps := resolve(root, p)
		if ps["type"] != "object" {
			continue
		}
		if ap, ok := ps["additionalProperties"].(map[string]any); ok && resolve(root, ap)["type"] == "integer" {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

func nonNullMembers(root, schema map[string]any) map[string]bool {
	props, _ := schema["properties"].(map[string]any)
	out := make(map[string]bool, len(props))
	for name, p := range props {
		if nullable, _ := resolve(root, p)["nullable"].(bool); !nullable {
			out[name] = true
		}
	}
	return out
}

// operationScopes returns the scopes of an operation's one security
// requirement, which must name only operator scopes.
func operationScopes(op map[string]any) ([]string, error) {
	sec, _ := op["security"].([]any)
	if len(sec) != 1 {
		return nil, fmt.Errorf("needs exactly one security requirement, has %d", len(sec))
	}
	req, _ := sec[0].(map[string]any)
	raw, ok := req["oauth2"].([]any)
	if len(req) != 1 || !ok || len(raw) == 0 {
		return nil, fmt.Errorf("its security requirement must name oauth2 scopes")
	}
	var out []string
	for _, s := range raw {
		name, _ := s.(string)
		if !scope.IsOperator(name) {
			return nil, fmt.Errorf("%q is not an operator scope", name)
		}
		out = append(out, name)
	}
	return out, nil
}

func lookup(root map[string]any, keys ...string) (map[string]any, error) {
	cur := root
	for _, k := range keys {
		next, ok := cur[k].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("the document has no %s", strings.Join(keys, "."))
		}
		cur = next
	}
	return cur, nil
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Operations returns the document's operations, sorted by path and method.
func Operations() ([]Operation, error) {
	d, err := parsed()
	if err != nil {
		return nil, err
	}
	return append([]Operation(nil), d.operations...), nil
}

// forSite returns the site's document, from the cache when it holds it.
func (d *document) forSite(origin string) *siteDocument {
	d.mu.Lock()
	defer d.mu.Unlock()
	if sd, ok := d.sites[origin]; ok {
		return sd
	}
	quoted, _ := json.Marshal(origin)
	body := bytes.ReplaceAll(d.json, []byte(originPlaceholder), quoted[1:len(quoted)-1])
	sum := sha256.Sum256(body)
	sd := &siteDocument{body: body, etag: `"` + hex.EncodeToString(sum[:16]) + `"`}
	if len(d.order) >= maxSiteDocuments {
		delete(d.sites, d.order[0])
		d.order = d.order[1:]
	}
	d.sites[origin] = sd
	d.order = append(d.order, origin)
	return sd
}

// OpenAPI serves GET /openapi.json: the document with this site's server
// URL and authorization endpoints (the only parts that differ per site).
// It is public, cacheable and revalidated by ETag.
func (h *Handler) OpenAPI(w http.ResponseWriter, r *http.Request) {
	site, ok := tenant.FromContext(r.Context())
	if !ok {
		tenant.WriteError(w, http.StatusNotFound, "not_found", "no site is served at this host")
		return
	}
	sd := h.doc.forSite(site.Origin)
	hdr := w.Header()
	hdr.Set("Cache-Control", "public, max-age=300")
	hdr.Set("ETag", sd.etag)
	hdr.Set("Access-Control-Allow-Origin", "*")
	if etagMatches(r.Header.Get("If-None-Match"), sd.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	hdr.Set("Content-Type", "application/json")
	_, _ = w.Write(sd.body)
}

// etagMatches applies If-None-Match (RFC 9110 §13.1.2, weak comparison).
func etagMatches(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == etag {
			return true
		}
	}
	return false
}
