package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/vocab"
)

// gqlReply is a decoded Member API answer.
type gqlReply struct {
	status int
	header http.Header
	raw    string
	Data   map[string]any `json:"data"`
	Errors []struct {
		Message    string         `json:"message"`
		Path       []any          `json:"path"`
		Extensions map[string]any `json:"extensions"`
	} `json:"errors"`
}

func (r *gqlReply) codes() []string {
	var out []string
	for _, e := range r.Errors {
		c, _ := e.Extensions["code"].(string)
		out = append(out, c)
	}
	return out
}

// gqlDo sends a request to origin's /member/graphql (with query, a query
// string, appended).
func gqlDo(t *testing.T, ts *testServer, method, origin, token, contentType string, body []byte, query ...string) *gqlReply {
	t.Helper()
	req, err := http.NewRequest(method, origin+vocab.MemberGraphQLPath+strings.Join(query, ""), bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := ts.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	r := &gqlReply{status: resp.StatusCode, header: resp.Header, raw: string(b)}
	if len(b) > 0 && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/") {
		if err := json.Unmarshal(b, r); err != nil {
			t.Fatalf("%s %s: the answer is not JSON: %v\n%s", method, origin, err, b)
		}
	}
	return r
}

// gqlQuery posts a GraphQL request and fails the test on anything but a
// 200 without errors.
func gqlQuery(t *testing.T, ts *testServer, origin, token, query string, vars map[string]any) map[string]any {
	t.Helper()
	r := gqlPost(t, ts, origin, token, query, vars)
	if r.status != 200 || len(r.Errors) != 0 {
		t.Fatalf("%s: %d %s", query, r.status, r.raw)
	}
	return r.Data
}

// gqlPost posts a GraphQL request.
func gqlPost(t *testing.T, ts *testServer, origin, token, query string, vars map[string]any) *gqlReply {
	t.Helper()
	body := map[string]any{"query": query}
	if vars != nil {
		body["variables"] = vars
	}
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	return gqlDo(t, ts, http.MethodPost, origin, token, "application/json", b)
}

// gqlPath walks decoded JSON: string keys for objects, ints for arrays.
func gqlPath(v any, keys ...any) any {
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || k < 0 || k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

// gqlTime parses a DateTime, failing the test when it is not RFC 3339.
func gqlTime(t *testing.T, v any) time.Time {
	t.Helper()
	s, _ := v.(string)
	tm, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatalf("DateTime %v: %v", v, err)
	}
	return tm
}

// gqlNear fails unless got is within a minute of want.
func gqlNear(t *testing.T, what string, got, want time.Time) {
	t.Helper()
	if d := got.Sub(want); d < -time.Minute || d > time.Minute {
		t.Errorf("%s = %s; want about %s", what, got, want)
	}
}

// gqlLectureID is the ID of the lecture titled title of a demo course.
func gqlLectureID(t *testing.T, ts *testServer, site *storage.Site, course, title string) string {
	t.Helper()
	c, err := ts.app.Store.CourseBySlug(context.Background(), site.ID, course)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range c.Sections {
		for _, l := range s.Lectures {
			if l.Title == title {
				return fmt.Sprint(l.ID)
			}
		}
	}
	t.Fatalf("no lecture %q in %s", title, course)
	return ""
}

func gqlSite(t *testing.T, ts *testServer, slug string) *storage.Site {
	t.Helper()
	s, err := ts.app.Store.SiteBySlug(context.Background(), slug)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func gqlUser(t *testing.T, ts *testServer, email string) *storage.User {
	t.Helper()
	u, err := ts.app.Store.UserByEmail(context.Background(), email)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
