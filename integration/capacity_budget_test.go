package integration

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/lectern/lectern/internal/demo"
	"github.com/lectern/lectern/limits"
	"github.com/lectern/lectern/vocab"
)

// Per-site budgets on the expensive endpoints (issue 14 part B, item 8):
// a site flooded at full speed is refused once its budget is spent, and
// the other site's requests at the same time are not.

type budgetCall func(t *testing.T, ts *testServer, origin string) (int, http.Header, []byte)

func post(t *testing.T, ts *testServer, u, contentType, body string, hdr ...string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := ts.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

// flood calls f n times at Demo Academy and, every fourth time, once at
// Open School (well within its own budget); it returns the refusals at
// the Academy and fails on any at Open School.
func flood(t *testing.T, ts *testServer, f budgetCall, n int) (refused int, last []byte, retryAfter string) {
	t.Helper()
	for i := range n {
		status, hdr, body := f(t, ts, ts.academy())
		if status == http.StatusTooManyRequests {
			refused++
			last, retryAfter = body, hdr.Get("Retry-After")
		}
		if i%4 != 0 {
			continue
		}
		if status, _, body := f(t, ts, ts.open()); status == http.StatusTooManyRequests {
			t.Fatalf("the quiet site was refused while the other spent its budget: %s", body)
		}
	}
	return refused, last, retryAfter
}

func TestTokenBudgetPerSite(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, withLimits(map[limits.Name]int{limits.TokenPerSite: 3}))
		junkCode := func(t *testing.T, ts *testServer, origin string) (int, http.Header, []byte) {
			return post(t, ts, origin+vocab.TokenPath, "application/x-www-form-urlencoded", url.Values{
				"grant_type": {"authorization_code"}, "code": {randomB64()}, "client_id": {demo.MemberClientID},
				"redirect_uri": {callback}, "code_verifier": {strings.Repeat("v", 43)}, "resource": {origin},
			}.Encode())
		}
		refused, body, retry := flood(t, ts, junkCode, 12)
		var e map[string]string
		_ = json.Unmarshal(body, &e)
		if refused == 0 || retry == "" || !strings.Contains(e["error_description"], "at this site") {
			t.Fatalf("12 token requests at a budget of 3/s: %d refused (Retry-After %q, %s); want 429s with Retry-After", refused, retry, body)
		}
	})
}

func TestMemberAPIBudgetPerSite(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, withLimits(map[limits.Name]int{limits.GraphQLCostPerSite: 2}))
		tokens := map[string]string{
			ts.academy(): ts.studentToken(t, ts.academy(), "openid", "account:read").AccessToken,
			ts.open():    ts.studentToken(t, ts.open(), "openid", "account:read").AccessToken,
		}
		// Cost 2: one request, one connection.
		query := `{"query":"{ viewer { enrolledCourses(first: 20) { nodes { slug } } } }"}`
		call := func(t *testing.T, ts *testServer, origin string) (int, http.Header, []byte) {
			return post(t, ts, origin+vocab.MemberGraphQLPath, "application/json", query, "Authorization", "Bearer "+tokens[origin])
		}
		refused, body, retry := flood(t, ts, call, 8)
		var resp struct {
			Errors []struct {
				Extensions map[string]any `json:"extensions"`
			} `json:"errors"`
		}
		if err := json.Unmarshal(body, &resp); refused == 0 || err != nil || retry == "" || len(resp.Errors) != 1 || resp.Errors[0].Extensions["code"] != "RATE_LIMITED" {
			t.Fatalf("8 queries of cost 2 at a budget of 2/s: %d refused (Retry-After %q): %s; want GraphQL RATE_LIMITED errors", refused, retry, body)
		}
	})
}

func TestMCPBudgetPerSite(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, withLimits(map[limits.Name]int{limits.MCPRequestsPerSite: 3}))
		call := func(t *testing.T, ts *testServer, origin string) (int, http.Header, []byte) {
			return post(t, ts, origin+vocab.MCPPath, "application/json",
				`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_courses","arguments":{"query":"go"}}}`,
				"Accept", "application/json, text/event-stream", "MCP-Protocol-Version", "2025-11-25")
		}
		refused, body, retry := flood(t, ts, call, 12)
		if refused == 0 || retry == "" || !bytes.Contains(body, []byte(`"rate_limited"`)) {
			t.Fatalf("12 MCP calls at a budget of 3/s: %d refused (Retry-After %q): %s", refused, retry, body)
		}
	})
}
