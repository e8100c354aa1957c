package integration

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/lectern/lectern/vocab"
)

// mcpTDo sends method to origin's /mcp through the whole server (router,
// middleware, handler) and returns status, headers and body.
func mcpTDo(t *testing.T, ts *testServer, origin, method string, hdr ...string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, origin+vocab.MCPPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	return mcpTSend(t, ts, req, hdr...)
}

// /mcp through the real router: the methods it serves and one Allow list
// for all its 405s (the router's and the handler's), HEAD as GET, no-store
// on a member's tool results, JSON-RPC errors that answer the request's id,
// unknown protocol versions named as such, and a body cap of exactly 1 MiB.
func TestMCPProtocolEdges(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	origin := ts.academy()

	// Methods (the audit's F8): before, HEAD was 405 and the 405s said
	// "OPTIONS, DELETE, GET, POST" or "POST".
	const allow = "OPTIONS, GET, HEAD, POST"
	getCode, getHdr, page := mcpTDo(t, ts, origin, http.MethodGet)
	headCode, headHdr, none := mcpTDo(t, ts, origin, http.MethodHead)
	if getCode != 200 || headCode != 200 || none != "" || page == "" || headHdr.Get("Content-Type") != getHdr.Get("Content-Type") ||
		headHdr.Get("Content-Length") != getHdr.Get("Content-Length") {
		t.Errorf("GET %d %v, HEAD %d %v (%d bytes of body)", getCode, getHdr, headCode, headHdr, len(none))
	}
	if code, hdr, _ := mcpTDo(t, ts, origin, http.MethodOptions); code != 204 || hdr.Get("Allow") != allow {
		t.Errorf("OPTIONS: %d Allow %q", code, hdr.Get("Allow"))
	}
	for _, c := range []struct {
		method string
		hdr    []string
	}{
		{method: http.MethodDelete}, {method: http.MethodPut}, {method: http.MethodPatch},
		{method: http.MethodGet, hdr: []string{"Accept", "text/event-stream"}},
	} {
		code, hdr, body := mcpTDo(t, ts, origin, c.method, c.hdr...)
		if code != 405 || hdr.Get("Allow") != allow || !strings.Contains(body, `"method_not_allowed"`) || strings.Contains(body, "Not Allowed") {
			t.Errorf("%s %v: %d Allow %q %s; want 405 Allow %q", c.method, c.hdr, code, hdr.Get("Allow"), body, allow)
		}
	}

	// A member's tool results are not stored by caches (F4): before, the
	// SDK's "no-cache, no-transform" went out.
	tok := ts.studentToken(t, origin).AccessToken
	code, hdr, body := mcpTPost(t, ts, origin, tok, mcpTToolCall("my_enrollments", nil))
	if code != 200 || !strings.Contains(body, "go-fundamentals") || strings.Join(hdr.Values("Cache-Control"), ",") != "no-store" {
		t.Errorf("my_enrollments: %d Cache-Control %q %.200s", code, hdr.Values("Cache-Control"), body)
	}

	// Errors about one request answer it, with its id (F2).
	for _, c := range []struct {
		body         string
		status, code int
	}{
		{`{"jsonrpc":"2.0","id":3,"method":"nope"}`, 404, -32601},
		{`{"jsonrpc":"2.0","id":3,"method":"initialize"}`, 400, -32602},
	} {
		code, _, body := mcpTPost(t, ts, origin, "", c.body)
		var e struct {
			ID    json.RawMessage `json:"id"`
			Error struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if json.Unmarshal([]byte(body), &e) != nil || code != c.status || e.Error.Code != c.code || string(e.ID) != "3" {
			t.Errorf("%s: %d %s; want %d, %d with id 3", c.body, code, body, c.status, c.code)
		}
	}
	// Ids the SDK would answer changed are refused (F3).
	if code, _, body := mcpTPost(t, ts, origin, "", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`); code != 400 || !strings.Contains(body, "-32600") {
		t.Errorf("id 1.5: %d %s", code, body)
	}
	// An unknown protocol version is named as such (F10).
	for _, v := range []string{"garbage", "2099-01-01"} {
		code, _, body := mcpTPost(t, ts, origin, "", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, "MCP-Protocol-Version", v)
		if code != 400 || !strings.Contains(body, "is not supported") || !strings.Contains(body, "2025-11-25") || strings.Contains(body, "_meta") {
			t.Errorf("MCP-Protocol-Version %s: %d %s", v, code, body)
		}
	}

	// The body cap is 1 MiB exactly (F1): before, the router refused
	// anything over 1,000,000 bytes.
	call := func(n int) string {
		head := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_courses","arguments":{"query":"`
		tail := `"}}}`
		return head + strings.Repeat("Z", n-len(head)-len(tail)) + tail
	}
	if code, _, body := mcpTPost(t, ts, origin, "", call(1<<20)); code != 200 || !strings.Contains(body, `"isError":true`) {
		t.Errorf("a call of exactly 1 MiB: %d %.200s", code, body)
	}
	if code, _, body := mcpTPost(t, ts, origin, "", call(1<<20+1)); code != 413 || !strings.Contains(body, "1 MiB") {
		t.Errorf("a call of 1 MiB + 1: %d %.200s", code, body)
	}
}

// The metadata documents and the JWKS answer weak, list and "*" forms of
// If-None-Match with 304, as the agent documents do (F5).
func TestMetadataRevalidation(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	for _, path := range []string{vocab.ProtectedResourcePath, vocab.AuthorizationServerPath, vocab.JWKSPath} {
		code, hdr, _ := ts.get(t, ts.academy(), path)
		etag := hdr.Get("ETag")
		if code != 200 || etag == "" {
			t.Fatalf("%s: %d ETag %q", path, code, etag)
		}
		for _, inm := range []string{etag, "W/" + etag, "*", `"other", ` + etag} {
			if code, _, body := ts.get(t, ts.academy(), path, "If-None-Match", inm); code != 304 || len(body) != 0 {
				t.Errorf("%s If-None-Match %s: %d", path, inm, code)
			}
		}
		if code, _, _ := ts.get(t, ts.academy(), path, "If-None-Match", `"other"`); code != 200 {
			t.Errorf("%s with another ETag: %d", path, code)
		}
	}
}
