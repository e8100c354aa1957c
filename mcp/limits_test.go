package mcp

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// batchOf is a JSON-RPC batch of n tools/call of search_courses.
func batchOf(n int) string {
	var b strings.Builder
	b.WriteString("[")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"jsonrpc":"2.0","id":` + strconv.Itoa(i+1) + `,"method":"tools/call","params":{"name":"search_courses","arguments":{}}}`)
	}
	b.WriteString("]")
	return b.String()
}

// rpcErrorOf decodes a JSON-RPC error response, failing the test if body is
// not one.
func rpcErrorOf(t *testing.T, body string) (id json.RawMessage, code int, message string) {
	t.Helper()
	var e struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &e); err != nil || e.JSONRPC != "2.0" || e.Error == nil {
		t.Fatalf("not a JSON-RPC error: %.300s", body)
	}
	return e.ID, e.Error.Code, e.Error.Message
}

// A batch is at most MaxBatch messages where batches exist (before protocol
// 2025-06-18, which a request without MCP-Protocol-Version is assumed to
// speak), and none from 2025-06-18 on. A refused batch runs nothing.
func TestMCPBatchLimits(t *testing.T) {
	tests := []struct {
		name     string
		version  string // "" sends no MCP-Protocol-Version
		messages int
		status   int
		mention  string // in the refusal
	}{
		{name: "no version, ten calls", messages: 10, status: 200},
		{name: "no version, eleven calls", messages: 11, status: 400, mention: "at most 10"},
		{name: "no version, 8000 calls", messages: 8000, status: 400, mention: "at most 10"},
		{name: "2025-03-26, ten calls", version: "2025-03-26", messages: 10, status: 200},
		{name: "2025-03-26, eleven calls", version: "2025-03-26", messages: 11, status: 400, mention: "at most 10"},
		{name: "2024-11-05, eleven calls", version: "2024-11-05", messages: 11, status: 400, mention: "at most 10"},
		{name: "2025-06-18, two calls", version: "2025-06-18", messages: 2, status: 400, mention: "2025-06-18"},
		{name: "2025-11-25, one call", version: "2025-11-25", messages: 1, status: 400, mention: "2025-06-18"},
		{name: "2026-07-28, 8000 calls", version: "2026-07-28", messages: 8000, status: 400, mention: "one message per request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake()
			srv := testServer(t, newTestHandler(f))
			hdr := []string{"MCP-Protocol-Version", tt.version}
			resp, body := post(t, srv, "", batchOf(tt.messages), hdr...)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d; want %d: %.300s", resp.StatusCode, tt.status, body)
			}
			if tt.status == 200 {
				var answers []struct {
					ID     int             `json:"id"`
					Result json.RawMessage `json:"result"`
				}
				if err := json.Unmarshal([]byte(body), &answers); err != nil || len(answers) != tt.messages {
					t.Fatalf("want %d answers: %v %.300s", tt.messages, err, body)
				}
				for _, a := range answers {
					if !strings.Contains(string(a.Result), "course-") {
						t.Fatalf("answer %d has no courses: %s", a.ID, a.Result)
					}
				}
				return
			}
			id, code, msg := rpcErrorOf(t, body)
			if string(id) != "null" || code != rpcInvalidRequest || !strings.Contains(msg, tt.mention) {
				t.Fatalf("refusal id %s code %d %q; want id null, %d, mentioning %q", id, code, msg, rpcInvalidRequest, tt.mention)
			}
			if f.calls != 0 {
				t.Fatalf("a refused batch reached the store %d times", f.calls)
			}
		})
	}
}

// Error messages repeat at most ~200 bytes of what the client sent, wherever
// they come from: the schema check of tool arguments, the SDK's decoding of
// params, its header checks, Lectern's own tools.
func TestMCPErrorsEchoBoundedInput(t *testing.T) {
	srv := testServer(t, newTestHandler(newFake()))
	long := strings.Repeat("Z", 900<<10) // as in the report: a 900 KB argument
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`
	tests := []struct {
		name    string
		body    string
		hdr     []string
		mention string // what the (bounded) message still says
	}{
		{name: "argument failing its schema",
			body:    `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_courses","arguments":{"limit":"` + long + `"}}}`,
			mention: "arguments"},
		{name: "argument of a tool that reads it",
			body:    `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_events","arguments":{"cursor":"` + long + `"}}}`,
			mention: "cursor"},
		{name: "unknown tool",
			body:    `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + long + `","arguments":{}}}`,
			mention: "tool"},
		{name: "params that do not decode",
			body:    `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"x":"` + long + `"}}`,
			mention: "initialize"},
		{name: "unknown method",
			body:    `{"jsonrpc":"2.0","id":1,"method":"` + long + `"}`,
			mention: "Method not found"},
		{name: "protocol version of the message against the header",
			body:    `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"` + long[:60<<10] + `"}}}`,
			hdr:     []string{"MCP-Protocol-Version", "2026-07-28"},
			mention: "does not match"},
		{name: "Mcp-Method header",
			body:    `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta + `}}`,
			hdr:     []string{"MCP-Protocol-Version", "2026-07-28", "Mcp-Method", long[:60<<10]},
			mention: "Mcp-Method"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := post(t, srv, "", tt.body, tt.hdr...)
			if n := strings.Count(body, "Z"); n > maxEcho {
				t.Fatalf("status %d: the answer repeats %d bytes of the input: %.400s", resp.StatusCode, n, body)
			}
			if !strings.Contains(body, tt.mention) {
				t.Fatalf("status %d: the answer no longer says what is wrong (%q): %.400s", resp.StatusCode, tt.mention, body)
			}
		})
	}
	if resp, body := post(t, srv, "", callBody("get_site_info")); resp.StatusCode != 200 || !strings.Contains(body, "Test School") {
		t.Fatalf("a good call after the bad ones: %d %s", resp.StatusCode, body)
	}
}

func TestMCPBounded(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int // length of the result before the marker
	}{
		{"short", 5},
		{strings.Repeat("a", maxEcho), maxEcho},
		{strings.Repeat("a", maxEcho+1), maxEcho},
		// A character is never split: é is two bytes, the cut falls inside
		// the 101st.
		{strings.Repeat("é", 150), maxEcho},
		{"a" + strings.Repeat("é", 150), maxEcho - 1},
	} {
		got := bounded(c.in)
		head := strings.TrimSuffix(got, " […]")
		if len(head) != c.want || (len(c.in) > maxEcho) != (head != got) || !strings.HasPrefix(c.in, head) {
			t.Errorf("bounded(%d bytes) = %d bytes %q", len(c.in), len(got), got)
		}
	}
}
