package integration

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// mcpTBatch is a JSON-RPC batch of n anonymous search_courses calls.
func mcpTBatch(n int) string {
	calls := make([]string, n)
	for i := range calls {
		calls[i] = `{"jsonrpc":"2.0","id":` + strconv.Itoa(i+1) + `,"method":"tools/call","params":{"name":"search_courses","arguments":{"query":"go"}}}`
	}
	return "[" + strings.Join(calls, ",") + "]"
}

// One anonymous request cannot make /mcp do unbounded work (issue 14: an
// 879 KB batch of 8,000 tools/call once answered 17.8 MB and grew the
// server by 640 MB): batches carry at most 10 messages where they exist
// (protocol versions before 2025-06-18, assumed without a header), none
// from 2025-06-18 on, a body at most 1 MiB, and error messages repeat at
// most ~200 bytes of the input.
func TestMCPRequestsAreBounded(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, nil)
		origin := ts.academy()
		noVersion := []string{"MCP-Protocol-Version", ""}

		code, _, body := mcpTPost(t, ts, origin, "", mcpTBatch(10), noVersion...)
		var answers []struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if code != 200 || json.Unmarshal([]byte(body), &answers) != nil || len(answers) != 10 {
			t.Fatalf("a batch of 10: %d %.300s", code, body)
		}

		for _, c := range []struct {
			name, body string
			hdr        []string
			mention    string
		}{
			{"8,000 calls without a protocol version", mcpTBatch(8000), noVersion, "at most 10"},
			{"11 calls under 2025-03-26", mcpTBatch(11), []string{"MCP-Protocol-Version", "2025-03-26"}, "at most 10"},
			{"2 calls under 2025-11-25", mcpTBatch(2), nil, "one message per request"},
		} {
			code, _, body := mcpTPost(t, ts, origin, "", c.body, c.hdr...)
			var e struct {
				ID    json.RawMessage `json:"id"`
				Error struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if code != 400 || json.Unmarshal([]byte(body), &e) != nil || string(e.ID) != "null" || e.Error.Code != -32600 || !strings.Contains(e.Error.Message, c.mention) {
				t.Errorf("%s: %d %.300s; want 400 JSON-RPC -32600 saying %q", c.name, code, body, c.mention)
			}
		}

		big := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_courses","arguments":{"query":"` + strings.Repeat("Z", 1<<20) + `"}}}`
		if code, _, body := mcpTPost(t, ts, origin, "", big); code != 413 || !strings.Contains(body, "request_too_large") {
			t.Errorf("a body over 1 MiB: %d %.200s", code, body)
		}
		invalid := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_courses","arguments":{"limit":"` + strings.Repeat("Z", 900<<10) + `"}}}`
		code, _, body = mcpTPost(t, ts, origin, "", invalid)
		if code != 200 || strings.Count(body, "Z") > 200 || !strings.Contains(body, `"isError":true`) {
			t.Errorf("a 900 KB invalid argument: %d, %d bytes of it repeated: %.300s", code, strings.Count(body, "Z"), body)
		}
	})
}
