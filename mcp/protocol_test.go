package mcp

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpVersions are the MCP-Protocol-Version values a client may send: none
// (2025-03-26 is assumed) and every revision the server speaks.
var mcpVersions = append([]string{""}, gomcp.SupportedProtocolVersions()...)

// A well-formed request the server cannot run is answered as JSON-RPC 2.0
// §5 and §5.1 say, with the request's own id (clients match answers by id),
// under every protocol version alike: an unknown method is -32601 with 404
// (the status the go-sdk gives from 2026-07-28 on, and SEP-2575 requires),
// a call without its params -32602 with 400. Only what carries no usable id
// (a notification, a batch) is answered without one.
func TestMCPRequestErrorsCarryTheID(t *testing.T) {
	srv := testServer(t, newTestHandler(newFake()))
	tests := []struct {
		name   string
		body   string
		status int
		code   int
		id     string // the answer's id, as JSON
	}{
		{name: "unknown method", body: `{"jsonrpc":"2.0","id":3,"method":"nope"}`, status: 404, code: rpcMethodNotFound, id: `3`},
		{name: "unknown method, string id", body: `{"jsonrpc":"2.0","id":"call-7","method":"tools/nope","params":{}}`, status: 404, code: rpcMethodNotFound, id: `"call-7"`},
		{name: "client-side method", body: `{"jsonrpc":"2.0","id":4,"method":"sampling/createMessage","params":{}}`, status: 404, code: rpcMethodNotFound, id: `4`},
		{name: "initialize without params", body: `{"jsonrpc":"2.0","id":1,"method":"initialize"}`, status: 400, code: rpcInvalidParams, id: `1`},
		{name: "tools/call without params", body: `{"jsonrpc":"2.0","id":5,"method":"tools/call"}`, status: 400, code: rpcInvalidParams, id: `5`},
		{name: "unknown notification", body: `{"jsonrpc":"2.0","method":"notifications/nope"}`, status: 400, code: rpcInvalidRequest, id: `null`},
	}
	for _, v := range mcpVersions {
		for _, tt := range tests {
			t.Run(v+" "+tt.name, func(t *testing.T) {
				resp, body := post(t, srv, "", tt.body, "MCP-Protocol-Version", v)
				id, code, msg := rpcErrorOf(t, body)
				if resp.StatusCode != tt.status || code != tt.code || string(id) != tt.id {
					t.Fatalf("%d, id %s, code %d %q; want %d, id %s, code %d", resp.StatusCode, id, code, msg, tt.status, tt.id, tt.code)
				}
			})
		}
	}
	// A batch (before 2025-06-18) runs as a whole or not at all: one unknown
	// method in it refuses it whole, without an id.
	batch := `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"nope"}]`
	resp, body := post(t, srv, "", batch, "MCP-Protocol-Version", "2025-03-26")
	if id, code, _ := rpcErrorOf(t, body); resp.StatusCode != 400 || code != rpcInvalidRequest || string(id) != "null" {
		t.Errorf("a batch with an unknown method: %d %s", resp.StatusCode, body)
	}
}

// The id of an answer is the id of the request (JSON-RPC 2.0 §5). Ids the
// go-sdk would change (it truncates 1.5 to 1, which may be another pending
// request, and rounds integers beyond 2^53) are refused instead; MCP
// allows only strings and integers.
func TestMCPIDsAreAnsweredUnchanged(t *testing.T) {
	srv := testServer(t, newTestHandler(newFake()))
	for _, id := range []string{`1`, `0`, `-7`, `9007199254740991`, `-9007199254740991`, `"x"`, `"1.5"`} {
		resp, body := post(t, srv, "", `{"jsonrpc":"2.0","id":`+id+`,"method":"ping"}`)
		var answer struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal([]byte(body), &answer); err != nil || resp.StatusCode != 200 || string(answer.ID) != id || answer.Result == nil {
			t.Errorf("ping with id %s: %d %s", id, resp.StatusCode, body)
		}
	}
	for _, id := range []string{`1.5`, `1.0`, `1e3`, `9007199254740992`, `9007199254740993`, `-9007199254740993`, `12345678901234567890123`} {
		resp, body := post(t, srv, "", `{"jsonrpc":"2.0","id":`+id+`,"method":"ping"}`)
		got, code, msg := rpcErrorOf(t, body)
		if resp.StatusCode != 400 || code != rpcInvalidRequest || string(got) != "null" || !strings.Contains(msg, "integer") || !strings.Contains(msg, id) {
			t.Errorf("ping with id %s: %d %s; want 400, -32600 without an id, naming the id", id, resp.StatusCode, body)
		}
	}
	f := newFake()
	srv = testServer(t, newTestHandler(f))
	batch := `[` + callBody("search_courses") + `,{"jsonrpc":"2.0","id":2.5,"method":"ping"}]`
	if resp, body := post(t, srv, "", batch, "MCP-Protocol-Version", "2025-03-26"); resp.StatusCode != 400 || f.calls != 0 {
		t.Errorf("a batch with id 2.5: %d %s, %d store calls", resp.StatusCode, body, f.calls)
	}
}

// An MCP-Protocol-Version that names no revision the server speaks is a 400
// saying so and listing the revisions it does speak (as the 2026-07-28
// revision defines it: -32022 with data), whether the name sorts before the
// known ones, after them, or is no date at all. Before, "garbage" and
// "2099-01-01" were told about a missing _meta field.
func TestMCPUnknownProtocolVersion(t *testing.T) {
	srv := testServer(t, newTestHandler(newFake()))
	for _, v := range []string{"garbage", "2099-01-01", "2024-10-07", "2025-11-26", strings.Repeat("9", 5000)} {
		for _, body := range []string{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, batchOf(2)} {
			resp, raw := post(t, srv, "", body, "MCP-Protocol-Version", v)
			var e struct {
				ID    json.RawMessage `json:"id"`
				Error struct {
					Code    int                                  `json:"code"`
					Message string                               `json:"message"`
					Data    gomcp.UnsupportedProtocolVersionData `json:"data"`
				} `json:"error"`
			}
			wantID := "1"
			if body[0] == '[' {
				wantID = "null"
			}
			if err := json.Unmarshal([]byte(raw), &e); err != nil || resp.StatusCode != 400 || string(e.ID) != wantID ||
				e.Error.Code != gomcp.CodeUnsupportedProtocolVersion || !strings.Contains(e.Error.Message, "is not supported") ||
				!strings.Contains(e.Error.Message, "2025-11-25, 2025-06-18") || len(raw) > 1000 {
				t.Fatalf("version %.20q: %d %.400s", v, resp.StatusCode, raw)
			}
			if diff := cmp.Diff(gomcp.SupportedProtocolVersions(), e.Error.Data.Supported); diff != "" || !strings.HasPrefix(v, strings.TrimSuffix(e.Error.Data.Requested, " […]")) || len(e.Error.Data.Requested) > maxEcho+10 {
				t.Errorf("version %.20q: data %+v (-want +got supported):\n%s", v, e.Error.Data, diff)
			}
		}
	}
	for _, v := range mcpVersions {
		if v == "2026-07-28" {
			continue // its requests carry a _meta field; the SDK client tests cover it
		}
		if resp, body := post(t, srv, "", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, "MCP-Protocol-Version", v); resp.StatusCode != 200 {
			t.Errorf("version %q: %d %s", v, resp.StatusCode, body)
		}
	}
}

// Every /mcp answer carries Cache-Control: no-store, a member's tool
// results above all: the go-sdk sets "no-cache, no-transform", which lets a
// cache keep them (RFC 9111 §5.2.2.4).
func TestMCPAnswersAreNotStored(t *testing.T) {
	srv := testServer(t, newTestHandler(newFake()))
	for _, c := range []struct {
		name, token, body string
		status            int
	}{
		{"member tool call", "member", callBody("my_enrollments"), 200},
		{"tools/list", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`, 200},
		{"notification", "", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, 202},
		{"unknown method", "member", `{"jsonrpc":"2.0","id":1,"method":"nope"}`, 404},
		{"gate refusal", "", callBody("my_enrollments"), 401},
	} {
		resp, body := post(t, srv, c.token, c.body)
		if resp.StatusCode != c.status || resp.Header.Values("Cache-Control")[0] != "no-store" || len(resp.Header.Values("Cache-Control")) != 1 {
			t.Errorf("%s: %d, Cache-Control %q; want %d no-store: %.200s", c.name, resp.StatusCode, resp.Header.Values("Cache-Control"), c.status, body)
		}
		if c.name == "member tool call" && !strings.Contains(body, `"course_slug":"go"`) {
			t.Errorf("%s: %s", c.name, body)
		}
	}
}

// /mcp serves OPTIONS, GET, HEAD and POST; HEAD answers as GET does (the
// description), and every 405 names the same Allow list.
func TestMCPMethods(t *testing.T) {
	srv := testServer(t, newTestHandler(newFake()))
	do := func(method string, hdr ...string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL, nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	get, page := do(http.MethodGet)
	head, none := do(http.MethodHead)
	if get.StatusCode != 200 || head.StatusCode != 200 || none != "" || !strings.Contains(page, "Test School") {
		t.Fatalf("GET %d, HEAD %d with a body of %d bytes", get.StatusCode, head.StatusCode, len(none))
	}
	for _, h := range []string{"Content-Type", "Content-Length", "Cache-Control"} {
		if head.Header.Get(h) != get.Header.Get(h) || get.Header.Get(h) == "" {
			t.Errorf("%s: HEAD %q, GET %q", h, head.Header.Get(h), get.Header.Get(h))
		}
	}
	const want = "OPTIONS, GET, HEAD, POST"
	if resp, _ := do(http.MethodOptions); resp.StatusCode != 204 || resp.Header.Get("Allow") != want {
		t.Errorf("OPTIONS: %d Allow %q", resp.StatusCode, resp.Header.Get("Allow"))
	}
	for _, c := range []struct {
		method string
		hdr    []string
	}{
		{method: http.MethodDelete},
		{method: http.MethodPut},
		{method: "PROPFIND"},
		{method: http.MethodGet, hdr: []string{"Accept", "text/event-stream"}},
		{method: http.MethodHead, hdr: []string{"Accept", "text/event-stream"}},
	} {
		resp, body := do(c.method, c.hdr...)
		if resp.StatusCode != 405 || resp.Header.Get("Allow") != want || (c.method != http.MethodHead && !strings.Contains(body, `"method_not_allowed"`)) {
			t.Errorf("%s %v: %d Allow %q %s", c.method, c.hdr, resp.StatusCode, resp.Header.Get("Allow"), body)
		}
		if strings.Contains(body, "Not Allowed") {
			t.Errorf("%s: %s", c.method, body)
		}
	}
	if !slices.Equal(Methods, strings.Split(want, ", ")) {
		t.Errorf("Methods = %v", Methods)
	}
}

// The go-sdk's plain-text refusals become error descriptions that read as
// sentences: a header name keeps its case ("Content-Type must be ...", not
// "content-Type must be ...").
func TestMCPRefusalTexts(t *testing.T) {
	srv := testServer(t, newTestHandler(newFake()))
	resp, body := post(t, srv, "", callBody("get_site_info"), "Content-Type", "text/plain")
	var e struct {
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	if err := json.Unmarshal([]byte(body), &e); err != nil || resp.StatusCode != 415 || e.Error != "unsupported_media_type" ||
		e.Description != "Content-Type must be 'application/json'" {
		t.Errorf("text/plain: %d %s", resp.StatusCode, body)
	}
}

// Revenue is an amount: a period without orders made "0.00 USD" (in the
// currency the site's catalog is priced in), not "Free", which is what a
// price of nothing reads.
func TestMCPSalesSummaryOfNothing(t *testing.T) {
	srv := testServer(t, newTestHandler(newFake()))
	var out SalesSummaryOutput
	call(t, connect(t, srv, "analyst"), "sales_summary", nil, &out)
	if out.Orders != 0 || out.RevenueCents != 0 || out.Revenue != "0.00 USD" || out.Currency != "USD" {
		t.Errorf("sales_summary without orders: %+v", out)
	}
}
