package discovery

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/lectern/lectern/limits"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
	"github.com/lectern/lectern/vocab"
)

type docsFakeStore struct {
	offerings *storage.Offerings
	courses   map[string]*storage.CourseDetail
	err       error
}

func (f *docsFakeStore) Offerings(context.Context, tenant.ID, time.Time) (*storage.Offerings, error) {
	if f.err != nil {
		return nil, f.err
	}
	return f.offerings, nil
}

func (f *docsFakeStore) CourseBySlug(_ context.Context, _ tenant.ID, slug string) (*storage.CourseDetail, error) {
	if f.err != nil {
		return nil, f.err
	}
	if c, ok := f.courses[slug]; ok {
		return c, nil
	}
	return nil, storage.ErrNotFound
}

var docsSiteA = &tenant.Site{ID: 1, Slug: "a", Name: "Vendor *School*", Origin: "https://a.example", Variant: tenant.VariantVendor, IDTokens: true}

func docsServe(t *testing.T, d *Docs, site *tenant.Site, h func(*Docs) http.HandlerFunc, path string, hdr ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	if site != nil {
		req = req.WithContext(tenant.WithSite(req.Context(), site))
	}
	w := httptest.NewRecorder()
	h(d)(w, req)
	return w
}

// Catalog text written by operators never becomes markup.
func TestDocsMarkdownEscaping(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Live Q&A: Go in Production", "Live Q&A: Go in Production"},
		{"a | b", `a \| b`},
		{"[click](javascript:x)", `\[click\](javascript:x)`},
		{"<script>alert(1)</script>", `\<script\>alert(1)\</script\>`},
		{"line one\n\n# heading", "line one # heading"},
		{"*bold* _it_ `code`", "\\*bold\\* \\_it\\_ \\`code\\`"},
	} {
		if got := mdText(c.in); got != c.want {
			t.Errorf("mdText(%q) = %q; want %q", c.in, got, c.want)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"# Not a heading", `\# Not a heading`},
		{"- not a list", `\- not a list`},
		{"1. not a list", `1\. not a list`},
		{"2024 was good", "2024 was good"},
	} {
		if got := mdParagraph(c.in); got != c.want {
			t.Errorf("mdParagraph(%q) = %q; want %q", c.in, got, c.want)
		}
	}
}

func TestDocsPKCEExample(t *testing.T) {
	// RFC 7636 Appendix B.
	if got := S256Challenge(PKCEExampleVerifier); got != "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM" {
		t.Errorf("S256Challenge = %s", got)
	}
}

// auth.md follows the site: variant, CIMD openness, MCP connections,
// id_tokens.
func TestAuthMDFollowsTheSite(t *testing.T) {
	tools := []vocab.MCPTool{{Name: "search_courses"}, {Name: "my_enrollments", Scopes: []string{"account:read"}}}
	vendor := string(authMarkdown(docsSiteA, tools, nil))
	closed := *docsSiteA
	closed.IDTokens, closed.CIMDOpen, closed.MCPConnections = false, true, false
	closedDoc := string(authMarkdown(&closed, tools, nil))
	open := &tenant.Site{ID: 2, Name: "Open", Origin: "http://127.0.0.1:8080", Variant: tenant.VariantOpen, IDTokens: true}
	openDoc := string(authMarkdown(open, tools, nil))

	for _, c := range []struct {
		doc  string
		want []string
		not  []string
	}{
		{vendor, []string{"# Signing in to Vendor \\*School\\*", "client_name", "hosts allowlisted", "not enabled on this site yet", "jwks_uri", "id_token", "| `my_enrollments` | `account:read` |"},
			[]string{"RFC 7591", "from any host"}},
		{closedDoc, []string{"accepts documents from any host", "issues no id_token"}, []string{"/.well-known/jwks.json"}},
		{openDoc, []string{"RFC 7591", "invalid_redirect_uri", "http://127.0.0.1:8080/api/oauth/register", "resource=http%3A%2F%2F127.0.0.1%3A8080"},
			[]string{"vendor platforms", "a.example"}},
	} {
		for _, w := range c.want {
			if !strings.Contains(c.doc, w) {
				t.Errorf("auth.md lacks %q", w)
			}
		}
		for _, n := range c.not {
			if strings.Contains(c.doc, n) {
				t.Errorf("auth.md has %q", n)
			}
		}
	}
	// The limits a client paces itself by, with the site's own values.
	if !strings.Contains(vendor, "| Token requests (code exchange and refresh) | 30 per second per client |") ||
		!strings.Contains(vendor, "| Client registrations | 10 per minute per IP address at this site |") {
		t.Error("auth.md lacks the default token and registration limits")
	}
	over := *docsSiteA
	over.ProviderLimits = map[string]int{"token_per_client": 120, "pending_authorizations": 500}
	over.OperatorLimits = map[string]int{"register_per_ip": 3, "authorize_per_site": 7, "login_checks_per_site": 2, "login_failures_per_account_ip": 4}
	cfg := &limits.Config{Defaults: map[limits.Name]int{limits.RegisterPerIP: 20, limits.LoginFailuresPerIP: 50}}
	overDoc := string(authMarkdown(&over, tools, cfg))
	for _, w := range []string{
		"| Token requests (code exchange and refresh) | 120 per second per client |",
		"| Client registrations | 3 per minute per IP address at this site |",
		// Every limit a client meets, with the site's values (audit of
		// issue 14, finding 8).
		"| Authorization requests that start a sign-in or fetch a Client ID Metadata Document not yet cached | 300 per minute per IP address (all sites together) |",
		"| The same, from every address together | 7 per second |",
		"| Sign-ins in progress (authorization requests waiting for sign-in or consent, each kept 15 minutes) | 500 at once |",
		"| Authorization requests of a signed-in person that wait for consent or a new sign-in | 20 at once per person, then 20 per 15 minutes |",
		"| Failed sign-ins for one account from one IP address | 4 per 15 minutes,",
		"| Failed sign-ins from one IP address, any account | 50 per 15 minutes,",
		"| Failed sign-ins for one account from anywhere | 100 per 15 minutes,",
		"| Password checks (sign-ins) | 2 per second (per server) |",
		"| Request bodies | 1 MiB (larger: `413`;",
		"| MCP JSON-RPC batches | 10 messages at most (more: `400`",
		// Not every refusal is a 429: the password gate answers 503.
		"`503` with `Retry-After` when the server's password checks are all busy",
	} {
		if !strings.Contains(overDoc, w) {
			t.Errorf("auth.md of a site with its own limits lacks %q", w)
		}
	}
	if strings.Contains(overDoc, "Beyond these the answer is `429`") {
		t.Error("auth.md says every limit answers 429; the password gate answers 503 and the size limits 413 or 400")
	}
	// Every endpoint of the metadata appears.
	as := AuthorizationServer(docsSiteA)
	for _, u := range []string{as.AuthorizationEndpoint, as.TokenEndpoint, as.UserInfoEndpoint, as.RevocationEndpoint, as.IntrospectionEndpoint, as.RegistrationEndpoint, as.JWKSURI, as.Issuer} {
		if !strings.Contains(vendor, u) {
			t.Errorf("auth.md lacks %s", u)
		}
	}
}

func TestDocsETagAndErrors(t *testing.T) {
	store := &docsFakeStore{
		offerings: &storage.Offerings{Courses: []storage.Course{{Slug: "go", Title: "Go | fast", PriceCents: 100, Currency: "EUR"}}},
		courses: map[string]*storage.CourseDetail{"go": {Course: storage.Course{Slug: "go", Title: "Go", Currency: "EUR"},
			Sections: []storage.SectionOutline{{Section: storage.Section{Title: "Empty"}}}}},
	}
	d := NewDocs(DocsOptions{Store: store})
	w := docsServe(t, d, docsSiteA, func(d *Docs) http.HandlerFunc { return d.PricingMD }, vocab.PricingMDPath)
	etag := w.Header().Get("ETag")
	if w.Code != 200 || etag == "" || w.Header().Get("Content-Type") != "text/markdown; charset=utf-8" || !strings.Contains(w.Body.String(), `Go \| fast`) {
		t.Fatalf("pricing.md: %d %v\n%s", w.Code, w.Header(), w.Body)
	}
	for _, inm := range []string{etag, "W/" + etag, `"x", ` + etag, "*"} {
		if w := docsServe(t, d, docsSiteA, func(d *Docs) http.HandlerFunc { return d.PricingMD }, vocab.PricingMDPath, "If-None-Match", inm); w.Code != 304 || w.Body.Len() != 0 {
			t.Errorf("If-None-Match %s: %d", inm, w.Code)
		}
	}
	// A change of the catalog changes the ETag.
	store.offerings.Courses[0].PriceCents = 200
	if w := docsServe(t, d, docsSiteA, func(d *Docs) http.HandlerFunc { return d.PricingMD }, vocab.PricingMDPath, "If-None-Match", etag); w.Code != 200 || w.Header().Get("ETag") == etag {
		t.Errorf("after a price change: %d, ETag %s", w.Code, w.Header().Get("ETag"))
	}

	for _, p := range []string{"/courses/go.md", "/courses/go", "/courses/GO.md", "/courses/.md", "/courses/a/b.md", "/courses/missing.md"} {
		w := docsServe(t, d, docsSiteA, func(d *Docs) http.HandlerFunc { return d.CourseMD }, p)
		want := 404
		if p == "/courses/go.md" {
			want = 200
		}
		if w.Code != want {
			t.Errorf("GET %s: %d; want %d", p, w.Code, want)
		}
	}
	if w := docsServe(t, d, docsSiteA, func(d *Docs) http.HandlerFunc { return d.CourseMD }, "/courses/go.md"); !strings.Contains(w.Body.String(), "No lectures published yet.") {
		t.Errorf("course page:\n%s", w.Body)
	}

	store.err = errors.Join(storage.ErrUnavailable, errors.New("dial tcp: secret"))
	for _, h := range []func(*Docs) http.HandlerFunc{
		func(d *Docs) http.HandlerFunc { return d.LLMSTxt },
		func(d *Docs) http.HandlerFunc { return d.PricingMD },
		func(d *Docs) http.HandlerFunc { return d.CourseMD },
	} {
		w := docsServe(t, d, docsSiteA, h, "/courses/go.md")
		if w.Code != 503 || w.Header().Get("Retry-After") == "" || strings.Contains(w.Body.String(), "secret") {
			t.Errorf("storage down: %d %s", w.Code, w.Body)
		}
	}
	// auth.md needs no storage.
	if w := docsServe(t, d, docsSiteA, func(d *Docs) http.HandlerFunc { return d.AuthMD }, vocab.AuthMDPath); w.Code != 200 {
		t.Errorf("auth.md with storage down: %d", w.Code)
	}
	if w := docsServe(t, d, nil, func(d *Docs) http.HandlerFunc { return d.AuthMD }, vocab.AuthMDPath); w.Code != 404 {
		t.Errorf("no site: %d", w.Code)
	}
}

// llms.txt stays bounded for a huge catalog, and says where the rest is.
func TestLLMsTxtBounded(t *testing.T) {
	o := &storage.Offerings{}
	for range maxLLMSCourses + 50 {
		o.Courses = append(o.Courses, storage.Course{Slug: "c", Title: "C", Currency: "USD"})
	}
	text := string(llmsText(docsSiteA, o))
	if n := strings.Count(text, "/courses/c.md"); n != maxLLMSCourses {
		t.Errorf("%d course links; want %d", n, maxLLMSCourses)
	}
	if !strings.Contains(text, "All 250 courses with prices") {
		t.Error("no pointer to the full list")
	}
	if !strings.HasPrefix(text, "# Vendor \\*School\\*\n\n> ") {
		t.Errorf("not llms.txt form:\n%s", text[:80])
	}
}
