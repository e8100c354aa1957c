package mcp

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lectern/lectern/tenant"
)

// Building a server: what the cache saves per request (the SDK asks for the
// server twice per request).
func BenchmarkMCPServerBuild(b *testing.B) {
	h := newTestHandler(newFake())
	for _, c := range []struct {
		name string
		mask toolMask
	}{{"public", publicMask}, {"all", ^toolMask(0)}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				h.build(testSite, c.mask)
			}
		})
	}
}

// A whole anonymous request through the handler, with the server cache and
// with a server built for every request.
func BenchmarkMCPRequest(b *testing.B) {
	for _, method := range []string{"tools/list", "tools/call"} {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`
		if method == "tools/call" {
			body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_site_info","arguments":{}}}`
		}
		for _, cached := range []bool{true, false} {
			name := method + "/cached"
			h := newTestHandler(newFake())
			if !cached {
				name = method + "/rebuilt"
				h.sdk = gomcp.NewStreamableHTTPHandler(func(r *http.Request) *gomcp.Server {
					c, _ := callerFrom(r.Context())
					return h.build(testSite, c.mask)
				}, &gomcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, DisableLocalhostProtection: true})
			}
			b.Run(name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Accept", "application/json, text/event-stream")
					req.Header.Set("MCP-Protocol-Version", "2025-11-25")
					req = req.WithContext(tenant.WithSite(req.Context(), testSite))
					w := httptest.NewRecorder()
					h.ServeHTTP(w, req)
					if w.Code != 200 {
						b.Fatalf("%d %s", w.Code, w.Body)
					}
				}
			})
		}
	}
}
