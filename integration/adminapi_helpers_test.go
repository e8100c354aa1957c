package integration

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lectern/lectern/adminapi"
	"github.com/lectern/lectern/internal/openapitest"
	"github.com/lectern/lectern/storage"
)

// admResp is an admin API answer.
type admResp struct {
	status int
	header http.Header
	body   []byte
}

// json decodes the body into v, failing the test when it is not JSON.
func (r admResp) json(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("answer %d is not JSON: %v\n%s", r.status, err, r.body)
	}
}

// obj decodes the body as a JSON object.
func (r admResp) obj(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	r.json(t, &m)
	return m
}

// want fails the test unless the status is code.
func (r admResp) want(t *testing.T, code int, what string) admResp {
	t.Helper()
	if r.status != code {
		t.Fatalf("%s: status %d, want %d; body %s", what, r.status, code, r.body)
	}
	return r
}

// admDo sends method origin/api/v1+path with the bearer token (none when
// empty) and body (JSON-encoded unless it is []byte), plus header pairs.
func admDo(t *testing.T, ts *testServer, method, origin, path, token string, body any, hdr ...string) admResp {
	t.Helper()
	var rd io.Reader
	ctype := ""
	switch b := body.(type) {
	case nil:
	case []byte:
		rd, ctype = bytes.NewReader(b), "application/json"
	default:
		rd, ctype = bytes.NewReader(mustJSON(b)), "application/json"
	}
	u := origin + path
	if !strings.HasPrefix(path, "/openapi.json") && !strings.HasPrefix(path, adminapi.UploadsPath) {
		u = origin + adminapi.BasePath + path
	}
	req, err := http.NewRequest(method, u, rd)
	if err != nil {
		t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := ts.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return admResp{status: resp.StatusCode, header: resp.Header, body: b}
}

// admUpload posts a multipart upload of content as the part "file".
func admUpload(t *testing.T, ts *testServer, origin, token, name, ctype string, content []byte, hdr ...string) admResp {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="file"; filename="`+name+`"`)
	h.Set("Content-Type", ctype)
	pw, err := mw.CreatePart(h)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = pw.Write(content)
	_ = mw.Close()
	req, err := http.NewRequest(http.MethodPost, origin+adminapi.BasePath+"/files", &buf)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+token)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := ts.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return admResp{status: resp.StatusCode, header: resp.Header, body: b}
}

// admPNG is a valid 1×1 PNG.
var admPNG = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\xff\xff?\x00\x05\xfe\x02\xfe\xa7\x35\x81\x84\x00\x00\x00\x00IEND\xaeB`\x82")

// admProblem checks an RFC 9457 problem answer: status, media type, and
// (when field is not empty) that errors[] names field.
func admProblem(t *testing.T, r admResp, status int, field, what string) map[string]any {
	t.Helper()
	r.want(t, status, what)
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/problem+json") {
		t.Fatalf("%s: Content-Type %q, want application/problem+json", what, ct)
	}
	p := r.obj(t)
	if p["status"] != float64(status) || p["type"] == "" || p["title"] == "" {
		t.Fatalf("%s: problem %v lacks type, title or status", what, p)
	}
	if field != "" {
		errs, _ := p["errors"].([]any)
		found := false
		for _, e := range errs {
			if m, _ := e.(map[string]any); m["field"] == field {
				found = true
			}
		}
		if !found {
			t.Fatalf("%s: problem %v does not name the field %q", what, p, field)
		}
	}
	return p
}

// admInsufficientScope checks a 403 insufficient_scope answer naming want.
func admInsufficientScope(t *testing.T, r admResp, want, what string) {
	t.Helper()
	r.want(t, http.StatusForbidden, what)
	wa := r.header.Get("WWW-Authenticate")
	if !strings.Contains(wa, `error="insufficient_scope"`) || !strings.Contains(wa, `scope="`+want+`"`) {
		t.Fatalf("%s: WWW-Authenticate %q; want insufficient_scope naming %s", what, wa, want)
	}
	var e oauthError
	r.json(t, &e)
	if e.Error != "insufficient_scope" {
		t.Fatalf("%s: body %s; want error insufficient_scope", what, r.body)
	}
}

// admAudit returns the actions of the site's audit events, newest first.
func admAudit(t *testing.T, ts *testServer, site storage.Site) []storage.AuditEvent {
	t.Helper()
	es, err := ts.app.Store.ListAudit(t.Context(), site.ID, 0, 500)
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// admSites returns the demo sites.
func admSites(t *testing.T, ts *testServer) (academy, open *storage.Site) {
	t.Helper()
	var err error
	if academy, err = ts.app.Store.SiteBySlug(t.Context(), "demo-academy"); err != nil {
		t.Fatal(err)
	}
	if open, err = ts.app.Store.SiteBySlug(t.Context(), "open-school"); err != nil {
		t.Fatal(err)
	}
	return academy, open
}

// admID reads an integer id field of a decoded object.
func admID(t *testing.T, m map[string]any, field string) int64 {
	t.Helper()
	v, ok := m[field].(float64)
	if !ok {
		t.Fatalf("no numeric %s in %v", field, m)
	}
	return int64(v)
}

// admValidateOpenAPI runs kin-openapi's loader and Validate on doc.
func admValidateOpenAPI(t *testing.T, doc []byte) {
	t.Helper()
	if err := openapitest.Validate(doc); err != nil {
		t.Fatalf("the document does not validate as OpenAPI 3.0: %v", err)
	}
}

// admPace spaces the tests' token requests: the token endpoint allows 30
// requests per second per client, and the per-scope tests need dozens of
// tokens from the same vendor client.
var admPace struct {
	sync.Mutex
	last time.Time
}

func admWait() {
	admPace.Lock()
	defer admPace.Unlock()
	if d := 50*time.Millisecond - time.Since(admPace.last); d > 0 {
		time.Sleep(d)
	}
	admPace.last = time.Now()
}

// admOwnerToken is ts.ownerToken, paced.
func admOwnerToken(t *testing.T, ts *testServer, origin string, scopes ...string) string {
	t.Helper()
	admWait()
	return ts.ownerToken(t, origin, scopes...).AccessToken
}

// admOperatorToken is ts.operatorToken, paced.
func admOperatorToken(t *testing.T, ts *testServer, origin, email, password string, scopes ...string) string {
	t.Helper()
	admWait()
	return ts.operatorToken(t, origin, email, password, scopes...).AccessToken
}
