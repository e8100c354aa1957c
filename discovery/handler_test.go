package discovery

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/lectern/lectern/tenant"
	"github.com/lectern/lectern/vocab"
)

// staticKeys publishes one fixed JWKS for every site.
type staticKeys []byte

func (k staticKeys) JWKS(context.Context, tenant.ID) ([]byte, error) { return k, nil }

// The metadata documents and the JWKS answer If-None-Match as RFC 9110
// §13.1.2 says and as the agent documents do: weak comparison (W/"x"
// matches "x"), a list of entity tags, and "*" all give 304. Before, only
// the exact ETag did, and the JWKS had no ETag at all.
func TestMetadataConditionalRequests(t *testing.T) {
	h := NewHandler(staticKeys(`{"keys":[]}`), slog.New(slog.DiscardHandler))
	mux := http.NewServeMux()
	mux.HandleFunc(vocab.ProtectedResourcePath, h.ProtectedResource)
	mux.HandleFunc(vocab.AuthorizationServerPath, h.AuthorizationServer)
	mux.HandleFunc(vocab.JWKSPath, h.JWKS)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mux.ServeHTTP(w, r.WithContext(tenant.WithSite(r.Context(), docsSiteA)))
	}))
	t.Cleanup(srv.Close)
	get := func(path, inm string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		if inm != "" {
			req.Header.Set("If-None-Match", inm)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	for _, path := range []string{vocab.ProtectedResourcePath, vocab.AuthorizationServerPath, vocab.JWKSPath} {
		first, body := get(path, "")
		etag := first.Header.Get("ETag")
		if first.StatusCode != 200 || len(etag) < 3 || etag[0] != '"' || body == "" {
			t.Fatalf("%s: %d ETag %q", path, first.StatusCode, etag)
		}
		for _, c := range []struct {
			inm  string
			want int
		}{
			{etag, 304},
			{"W/" + etag, 304},
			{"*", 304},
			{`"zzz", ` + etag, 304},
			{`"zzz",W/` + etag, 304},
			{`"zzz"`, 200},
			{`W/"zzz"`, 200},
		} {
			resp, body := get(path, c.inm)
			if resp.StatusCode != c.want || resp.Header.Get("ETag") != etag || (c.want == 304) != (body == "") {
				t.Errorf("%s If-None-Match: %s: %d ETag %q, %d bytes; want %d", path, c.inm, resp.StatusCode, resp.Header.Get("ETag"), len(body), c.want)
			}
		}
	}
	if resp, _ := get(vocab.JWKSPath, ""); resp.Header.Get("Content-Type") != "application/jwk-set+json" || resp.Header.Get("Cache-Control") != metadataMaxAge {
		t.Errorf("JWKS headers: %v", resp.Header)
	}
}
