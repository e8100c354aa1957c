package integration

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/lectern/lectern/vocab"
)

// chunked hides a body's length, so that it goes out chunked and only
// reading it finds it too large.
type chunked struct{ io.Reader }

// A form over the 1 MiB body limit is answered 413 whether its length is
// declared or it comes chunked, in the endpoint's format: RFC 6749-style
// JSON at the token, revocation and introspection endpoints, the HTML
// error page at the browser forms. Before, a chunked one got 400 "not a
// valid form", as if its syntax were wrong.
func TestChunkedFormsOverTheLimitAre413(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	big := append([]byte("grant_type=authorization_code&code="), bytes.Repeat([]byte("x"), 1<<20+1)...)
	post := func(origin, path string) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, origin+path, chunked{bytes.NewReader(big)})
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if req.ContentLength != 0 {
			t.Fatalf("POST %s declares its length (%d): it would not go out chunked", path, req.ContentLength)
		}
		resp, err := ts.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	for _, path := range []string{vocab.TokenPath, vocab.RevocationPath, vocab.IntrospectionPath} {
		resp, body := post(ts.academy(), path)
		var doc map[string]string
		_ = json.Unmarshal([]byte(body), &doc)
		if resp.StatusCode != http.StatusRequestEntityTooLarge || doc["error"] != "request_too_large" || !strings.Contains(doc["error_description"], "1 MiB") {
			t.Errorf("POST %s with a chunked form over 1 MiB: %d %.300s; want 413 request_too_large", path, resp.StatusCode, body)
		}
	}
	for _, path := range []string{"/login", "/password/forgot", "/signup"} {
		resp, body := post(ts.academy(), path)
		if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") ||
			!strings.Contains(body, "The form is larger than this page accepts") {
			t.Errorf("POST %s with a chunked form over 1 MiB: %d %s %.300s; want the 413 page", path, resp.StatusCode, resp.Header.Get("Content-Type"), webExcerpt(body))
		}
	}
}
