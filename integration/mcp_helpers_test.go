package integration

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lectern/lectern/vocab"
)

// mcpTBearer adds a bearer token to every request, as an MCP client
// configured with a token does.
type mcpTBearer struct {
	base  http.RoundTripper
	token string
}

func (b mcpTBearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// mcpTHTTPClient is ts.client (which reaches the test server for both demo
// origins) with the token added when there is one.
func mcpTHTTPClient(ts *testServer, token string) *http.Client {
	c := *ts.client
	if token != "" {
		c.Transport = mcpTBearer{base: ts.client.Transport, token: token}
	}
	return &c
}

// mcpTConnect connects the go-sdk MCP client to origin's /mcp, with token
// ("" for anonymous).
func mcpTConnect(t *testing.T, ts *testServer, origin, token string) *gomcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	client := gomcp.NewClient(&gomcp.Implementation{Name: "lectern-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &gomcp.StreamableClientTransport{
		Endpoint: origin + vocab.MCPPath, HTTPClient: mcpTHTTPClient(ts, token), MaxRetries: -1,
	}, nil)
	if err != nil {
		t.Fatalf("connecting to %s%s: %v", origin, vocab.MCPPath, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// mcpTToolNames lists the session's tools, sorted.
func mcpTToolNames(t *testing.T, cs *gomcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

// mcpTCall calls a tool that must succeed and decodes its structured
// content into out. It returns the result's JSON (structured and text
// content) for "never appears" checks.
func mcpTCall(t *testing.T, cs *gomcp.ClientSession, name string, args map[string]any, out any) string {
	t.Helper()
	res, raw := mcpTCallRaw(t, cs, name, args)
	if res.IsError {
		t.Fatalf("%s(%v) failed: %s", name, args, raw)
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s: structured content %s: %v", name, b, err)
		}
	}
	return raw
}

// mcpTCallRaw calls a tool and returns the result, failing only on a
// protocol error.
func mcpTCallRaw(t *testing.T, cs *gomcp.ClientSession, name string, args map[string]any) (*gomcp.CallToolResult, string) {
	t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	res, err := cs.CallTool(context.Background(), &gomcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	raw, _ := json.Marshal(res)
	return res, string(raw)
}

// mcpTPost sends one raw JSON-RPC POST to origin's /mcp, as curl would.
// hdr are extra header name/value pairs.
func mcpTPost(t *testing.T, ts *testServer, origin, token, body string, hdr ...string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, origin+vocab.MCPPath, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	code, h, b := mcpTSend(t, ts, req, hdr...)
	return code, h, strings.TrimSpace(b)
}

// mcpTSend sets the header name/value pairs hdr on req, sends it through
// the whole server and returns status, headers and body.
func mcpTSend(t *testing.T, ts *testServer, req *http.Request, hdr ...string) (int, http.Header, string) {
	t.Helper()
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := ts.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// mcpTToolCall is the JSON-RPC body of one tools/call.
func mcpTToolCall(name string, args map[string]any) string {
	if args == nil {
		args = map[string]any{}
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{"name": name, "arguments": args}})
	return string(b)
}
