package integration

import (
	"crypto/x509"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/lectern/lectern/internal/server"
	"github.com/lectern/lectern/limits"
	"github.com/lectern/lectern/vocab"
)

// Client ID Metadata Documents fetched for strangers (audit of issue 14,
// finding 3): an anonymous authorization whose client_id is a document's
// URL makes the server fetch it, so the fetch is charged to the anonymous
// limits before it is made, and a failed fetch is remembered briefly.

// countingCIMDServer serves a valid document at /good.json and 404 at
// every other path over TLS, counting the requests per path.
type countingCIMDServer struct {
	*httptest.Server
	roots *x509.CertPool
	mu    sync.Mutex
	hits  map[string]int
}

func newCountingCIMDServer(t *testing.T) *countingCIMDServer {
	t.Helper()
	s := &countingCIMDServer{hits: map[string]int{}}
	s.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.URL.Path]++
		s.mu.Unlock()
		if r.URL.Path != "/good.json" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"client_id": s.URL + "/good.json", "client_name": "Counted Agent", "redirect_uris": []string{callback},
			"token_endpoint_auth_method": "none",
		})
	}))
	t.Cleanup(s.Close)
	s.roots = x509.NewCertPool()
	s.roots.AddCert(s.Certificate())
	return s
}

func (s *countingCIMDServer) fetches(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

// With authorize_per_ip at 3, the 4th anonymous authorization from one
// address naming a new document URL is refused (429) without a fetch; a
// URL whose fetch failed is not fetched again within the failure's cache
// time (and that answer costs no limit); a document fetched for a request
// is charged once, not again when the request is stored.
func TestCIMDFetchesChargedAndFailuresCached(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		doc := newCountingCIMDServer(t)
		ts := startServer(t, b, withLimits(map[limits.Name]int{limits.AuthorizePerIP: 3},
			func(c *server.Config) { c.CIMDTestRoots = doc.roots }))
		// Open School accepts documents from any host (Variant B).
		withDoc := func(path string) url.Values { return url.Values{"client_id": {doc.URL + path}} }

		ip := nextSourceIP()
		for i, path := range []string{"/missing-1.json", "/missing-2.json", "/missing-3.json"} {
			p := anonymousAuthorize(t, ts, ts.open(), ip, withDoc(path))
			if p.Status != http.StatusBadRequest || !hasText(p, "404") {
				t.Fatalf("authorization %d naming %s: %d; want 400 with the fetch's failure\n%s", i+1, path, p.Status, p.Body)
			}
			if n := doc.fetches(path); n != 1 {
				t.Fatalf("%s fetched %d times, want 1", path, n)
			}
		}
		p := anonymousAuthorize(t, ts, ts.open(), ip, withDoc("/missing-4.json"))
		if p.Status != http.StatusTooManyRequests || p.Header.Get("Retry-After") == "" || !hasText(p, "Too many sign-ins are being started") {
			t.Fatalf("4th authorization from one address naming a new document: %d Retry-After %q; want 429\n%s", p.Status, p.Header.Get("Retry-After"), p.Body)
		}
		if n := doc.fetches("/missing-4.json"); n != 0 {
			t.Fatalf("the refused request's document was fetched %d times, want 0: the limit applies before the fetch", n)
		}

		// The failed URL again, from another address, at once: the same
		// answer, no second fetch.
		p = anonymousAuthorize(t, ts, ts.open(), nextSourceIP(), withDoc("/missing-1.json"))
		if p.Status != http.StatusBadRequest || !hasText(p, "404") {
			t.Fatalf("a failed URL asked again: %d; want the same 400\n%s", p.Status, p.Body)
		}
		if n := doc.fetches("/missing-1.json"); n != 1 {
			t.Fatalf("a URL that failed was fetched %d times within the failure's cache time, want 1", n)
		}

		// A good document: fetched once, and that request is charged once.
		ip = nextSourceIP()
		for i := range 3 {
			p := anonymousAuthorize(t, ts, ts.open(), ip, withDoc("/good.json"))
			if p.Status != http.StatusFound || !strings.HasPrefix(p.Header.Get("Location"), "/login?auth_request=") {
				t.Fatalf("authorization %d with a good document: %d %q; want the sign-in page (3 within a limit of 3)\n%s",
					i+1, p.Status, p.Header.Get("Location"), p.Body)
			}
		}
		if p := anonymousAuthorize(t, ts, ts.open(), ip, withDoc("/good.json")); p.Status != http.StatusTooManyRequests {
			t.Fatalf("4th authorization with a good document: %d, want 429", p.Status)
		}
		if n := doc.fetches("/good.json"); n != 1 {
			t.Fatalf("the good document was fetched %d times, want 1 (then cached)", n)
		}
	})
}

// The introspection endpoint needs a confidential client, which a Client
// ID Metadata Document never is: a caller naming a document's URL is
// refused without the document being fetched, so introspection cannot be
// used to make the server fetch for strangers (decisions.md, the
// follow-up of the limits audit's finding 3).
func TestIntrospectionFetchesNoDocument(t *testing.T) {
	doc := newCountingCIMDServer(t)
	ts := startServer(t, backend{name: "embedded"}, &serverOptions{configure: func(c *server.Config) { c.CIMDTestRoots = doc.roots }})
	for _, path := range []string{"/good.json", "/missing.json"} {
		status, _, body := ts.postForm(t, ts.open()+vocab.IntrospectionPath,
			url.Values{"token": {"x"}, "client_id": {doc.URL + path}, "client_secret": {"guess"}})
		if status != http.StatusUnauthorized || body["error"] != "invalid_client" {
			t.Fatalf("introspection as the document %s: %d %v; want 401 invalid_client", path, status, body)
		}
		if n := doc.fetches(path); n != 0 {
			t.Fatalf("introspection as the document %s fetched it %d times; want 0", path, n)
		}
	}
}
