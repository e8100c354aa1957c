package adminapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/labstack/echo/v4"

	"github.com/lectern/lectern/authserver/scope"
	"github.com/lectern/lectern/internal/openapitest"
	"github.com/lectern/lectern/tenant"
	"github.com/lectern/lectern/vocab"
)

// validateOpenAPI runs kin-openapi's loader and Validate on each file.
func validateOpenAPI(t *testing.T, files ...string) {
	t.Helper()
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := openapitest.Validate(data); err != nil {
			t.Fatalf("%s is not a valid OpenAPI 3.0 document: %v", f, err)
		}
	}
}

func TestSourceAndServedDocumentsValidate(t *testing.T) {
	served := filepath.Join(t.TempDir(), "served.json")
	if err := os.WriteFile(served, newDocument().forSite("https://academy.example.com").body, 0o600); err != nil {
		t.Fatal(err)
	}
	validateOpenAPI(t, "openapi.yaml", served)
}

// The checker must refuse a broken document, or the test above proves
// nothing.
func TestOpenAPICheckerRefusesBrokenDocument(t *testing.T) {
	broken := bytes.Replace(SourceYAML, []byte("$ref: '#/components/schemas/CourseList'"), []byte("$ref: '#/components/schemas/NoSuchSchema'"), 1)
	if err := openapitest.Validate(broken); err == nil {
		t.Fatal("the checker accepted a document with a dangling $ref")
	}
}

// Every operation of the document has a route and a handler, and every
// route and handler an operation; every route has the scopes the guard
// enforces.
func TestEveryOperationHasAHandlerAndEveryHandlerAnOperation(t *testing.T) {
	ops, err := Operations()
	if err != nil {
		t.Fatal(err)
	}
	e := echo.New()
	h := &Handler{doc: newDocument()}
	h.Register(e, vocab.OpenAPIPath)

	var fromDoc, fromRoutes []string
	ids := map[string]bool{}
	for _, op := range ops {
		key := routeKey(op.Method, BasePath+echoPath(op.Path))
		fromDoc = append(fromDoc, key)
		if ids[op.OperationID] {
			t.Errorf("operationId %s is used twice", op.OperationID)
		}
		ids[op.OperationID] = true
		if got := h.doc.scopes[key]; !slices.Equal(got, op.Scopes) || len(got) == 0 {
			t.Errorf("%s: the guard enforces %v; the document declares %v", key, got, op.Scopes)
		}
	}
	for _, r := range e.Routes() {
		if !strings.HasPrefix(r.Path, BasePath+"/") || r.Method == echo.RouteNotFound {
			continue
		}
		fromRoutes = append(fromRoutes, routeKey(r.Method, r.Path))
	}
	sort.Strings(fromDoc)
	sort.Strings(fromRoutes)
	if d := cmp.Diff(fromDoc, fromRoutes); d != "" {
		t.Errorf("document operations (-) and registered routes (+) differ:\n%s", d)
	}

	// The strict interface, which *Handler implements, has one method per
	// operationId.
	var methods []string
	it := reflect.TypeFor[StrictServerInterface]()
	for i := range it.NumMethod() {
		methods = append(methods, it.Method(i).Name)
	}
	var want []string
	for id := range ids {
		want = append(want, strings.ToUpper(id[:1])+id[1:])
	}
	sort.Strings(methods)
	sort.Strings(want)
	if d := cmp.Diff(want, methods); d != "" {
		t.Errorf("operationIds (-) and handler methods (+) differ:\n%s", d)
	}
	if len(ops) < 80 {
		t.Errorf("the document has %d operations; expected the full set", len(ops))
	}
}

// Each operator scope gates at least one operation, and the document's
// OAuth2 scheme lists exactly the operator scopes.
func TestEveryOperatorScopeGatesOperations(t *testing.T) {
	ops, err := Operations()
	if err != nil {
		t.Fatal(err)
	}
	used := map[string][]string{}
	for _, op := range ops {
		for _, s := range op.Scopes {
			used[s] = append(used[s], op.OperationID)
		}
		// Reads need a read scope; writes need a write scope (storage and
		// OAuth applications, which have no read scope, excepted).
		if op.Method == http.MethodGet && !scope.IsRead(op.Scopes[0]) && op.Scopes[0] != "school:write" && op.Scopes[0] != "storage:write" {
			t.Errorf("%s reads but needs %v", op.OperationID, op.Scopes)
		}
		if op.Method != http.MethodGet && scope.IsRead(op.Scopes[0]) {
			t.Errorf("%s writes but needs only %v", op.OperationID, op.Scopes)
		}
	}
	for _, s := range scope.OperatorScopes() {
		if len(used[s]) == 0 {
			t.Errorf("no operation needs %s", s)
		}
	}
	var root struct {
		Components struct {
			SecuritySchemes map[string]struct {
				Flows struct {
					AuthorizationCode struct {
						Scopes map[string]string `json:"scopes"`
					} `json:"authorizationCode"`
				} `json:"flows"`
			} `json:"securitySchemes"`
		} `json:"components"`
	}
	for name, src := range map[string][]byte{"source": yamlToJSON(t, SourceYAML), "served": newDocument().forSite("https://a.test").body} {
		if err := json.Unmarshal(src, &root); err != nil {
			t.Fatal(err)
		}
		var listed []string
		for s := range root.Components.SecuritySchemes["oauth2"].Flows.AuthorizationCode.Scopes {
			listed = append(listed, s)
		}
		sort.Strings(listed)
		want := scope.OperatorScopes()
		sort.Strings(want)
		if d := cmp.Diff(want, listed); d != "" {
			t.Errorf("%s document's OAuth2 scopes differ from the operator scopes (-want +got):\n%s", name, d)
		}
	}
}

// Two sites' documents differ in the server URL and the two OAuth
// endpoint URLs, and in nothing else.
func TestSiteDocumentsDifferOnlyInSiteURLs(t *testing.T) {
	d := newDocument()
	var a, b any
	if err := json.Unmarshal(d.forSite("https://academy.example.com").body, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(d.forSite("http://127.0.0.1:8080").body, &b); err != nil {
		t.Fatal(err)
	}
	diffs := openapitest.Diff(a, b)
	want := []string{
		".components.securitySchemes.oauth2.flows.authorizationCode.authorizationUrl: https://academy.example.com/oauth/authorize | http://127.0.0.1:8080/oauth/authorize",
		".components.securitySchemes.oauth2.flows.authorizationCode.tokenUrl: https://academy.example.com/api/oauth/token | http://127.0.0.1:8080/api/oauth/token",
		".servers[0].url: https://academy.example.com/api/v1 | http://127.0.0.1:8080/api/v1",
	}
	if d := cmp.Diff(want, diffs); d != "" {
		t.Errorf("documents differ elsewhere (-want +got):\n%s", d)
	}
}

func yamlToJSON(t *testing.T, src []byte) []byte {
	t.Helper()
	d, err := parseDocument(src)
	if err != nil {
		t.Fatal(err)
	}
	return d.json
}

func TestOpenAPIServesPerSiteWithETag(t *testing.T) {
	h := &Handler{doc: newDocument()}
	get := func(origin, inm string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodGet, "/openapi.json", nil)
		r = r.WithContext(tenant.WithSite(r.Context(), &tenant.Site{ID: 1, Origin: origin}))
		if inm != "" {
			r.Header.Set("If-None-Match", inm)
		}
		w := httptest.NewRecorder()
		h.OpenAPI(w, r)
		return w
	}
	first := get("https://a.example", "")
	if first.Code != http.StatusOK || first.Header().Get("Content-Type") != "application/json" || first.Header().Get("ETag") == "" {
		t.Fatalf("GET: %d %v", first.Code, first.Header())
	}
	if !bytes.Contains(first.Body.Bytes(), []byte(`"url": "https://a.example/api/v1"`)) || bytes.Contains(first.Body.Bytes(), []byte(originPlaceholder)) {
		t.Fatal("the document does not carry the site's server URL")
	}
	etag := first.Header().Get("ETag")
	if again := get("https://a.example", etag); again.Code != http.StatusNotModified || again.Body.Len() != 0 {
		t.Fatalf("If-None-Match with the ETag: %d", again.Code)
	}
	other := get("https://b.example", etag)
	if other.Code != http.StatusOK || other.Header().Get("ETag") == etag {
		t.Fatal("another site's document has the same ETag")
	}
	if cached := h.doc.forSite("https://a.example"); cached != h.doc.forSite("https://a.example") {
		t.Fatal("the site's document is not cached")
	}
}

// The per-site cache is bounded.
func TestSiteDocumentCacheIsBounded(t *testing.T) {
	d := newDocument()
	for i := range maxSiteDocuments + 10 {
		d.forSite(fmt.Sprintf("https://s%d.example", i))
	}
	if len(d.sites) != maxSiteDocuments || len(d.order) != maxSiteDocuments {
		t.Fatalf("cache holds %d documents; want %d", len(d.sites), maxSiteDocuments)
	}
	if _, ok := d.sites["https://s0.example"]; ok {
		t.Fatal("the oldest document was not evicted")
	}
}

// api.gen.go is what the generator pinned in go.mod makes of the document now.
func TestGeneratedCodeIsCurrent(t *testing.T) {
	cfg, err := os.ReadFile("cfg.yaml")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "api.gen.go")
	cfg = bytes.Replace(cfg, []byte("output: api.gen.go"), []byte("output: "+out), 1)
	tmpCfg := filepath.Join(t.TempDir(), "cfg.yaml")
	if err := os.WriteFile(tmpCfg, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	if msg, err := exec.Command("go", "tool", "oapi-codegen", "-config", tmpCfg, "openapi.yaml").CombinedOutput(); err != nil {
		t.Fatalf("oapi-codegen: %v\n%s", err, msg)
	}
	want, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("api.gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, got) {
		t.Fatal("api.gen.go is stale: run go generate ./adminapi/")
	}
}

// Every operation of the document is refused without a token: the guard
// runs before anything else (also for operations whose parameters or body
// would not parse).
func TestGuardRefusesRequestsWithoutToken(t *testing.T) {
	ops, err := Operations()
	if err != nil {
		t.Fatal(err)
	}
	e := echo.New()
	h := &Handler{doc: newDocument(), verifier: noTokens{}}
	h.Register(e, vocab.OpenAPIPath)
	site := &tenant.Site{ID: 1, Origin: "https://a.example"}
	for _, op := range ops {
		path := BasePath + strings.NewReplacer("{courseId}", "1", "{sectionId}", "x", "{userId}", "u", "{role}", "owner").Replace(op.Path)
		for strings.Contains(path, "{") {
			i, j := strings.Index(path, "{"), strings.Index(path, "}")
			path = path[:i] + "1" + path[j+1:]
		}
		r := httptest.NewRequest(op.Method, path, strings.NewReader("{not json"))
		r.Header.Set("Content-Type", "application/json")
		r = r.WithContext(tenant.WithSite(r.Context(), site))
		w := httptest.NewRecorder()
		e.ServeHTTP(w, r)
		if w.Code != http.StatusUnauthorized || !strings.Contains(w.Header().Get("WWW-Authenticate"), "resource_metadata=") {
			t.Errorf("%s %s without a token: %d %v", op.Method, path, w.Code, w.Header())
		}
	}
	// A method the path does not have is 405 with Allow.
	r405 := httptest.NewRequest(http.MethodPut, BasePath+"/courses/7", nil)
	r405 = r405.WithContext(tenant.WithSite(r405.Context(), site))
	w405 := httptest.NewRecorder()
	e.ServeHTTP(w405, r405)
	if w405.Code != http.StatusMethodNotAllowed || w405.Header().Get("Allow") != "DELETE, GET, PATCH" {
		t.Errorf("PUT /courses/7: %d, Allow %q", w405.Code, w405.Header().Get("Allow"))
	}
	// A path the document does not name is 404, token or not.
	r := httptest.NewRequest(http.MethodGet, BasePath+"/no-such-thing", nil)
	r = r.WithContext(tenant.WithSite(r.Context(), site))
	w := httptest.NewRecorder()
	e.ServeHTTP(w, r)
	if w.Code != http.StatusNotFound || w.Header().Get("Content-Type") != problemContentType {
		t.Errorf("unknown path: %d %s", w.Code, w.Header().Get("Content-Type"))
	}
}
