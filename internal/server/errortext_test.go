package server

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/lectern/lectern/vocab"
)

// Errors the router answers itself read as sentences: "not found", not
// "not Found" (the lower-cased first letter of net/http's status text).
func TestRouterErrorDescriptions(t *testing.T) {
	s, hosts := benchServer(t, 1)
	srv := httptest.NewTLSServer(s)
	t.Cleanup(srv.Close)
	for _, c := range []struct {
		method, path string
		status       int
		want         string
	}{
		{http.MethodGet, "/no-such-page", 404, "not found"},
		{http.MethodPost, vocab.MCPPath + "/", 404, "not found"},
		{http.MethodPut, vocab.MCPPath, 405, "method PUT is not allowed here"},
	} {
		req, _ := http.NewRequest(c.method, srv.URL+c.path, strings.NewReader("{}"))
		req.Host = hosts[0]
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var e struct {
			Description string `json:"error_description"`
		}
		if err := json.Unmarshal(b, &e); err != nil || resp.StatusCode != c.status || e.Description != c.want {
			t.Errorf("%s %s: %d %s; want %d %q", c.method, c.path, resp.StatusCode, b, c.status, c.want)
		}
	}
}
