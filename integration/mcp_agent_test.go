package integration

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/lectern/lectern/internal/demo"
	"github.com/lectern/lectern/internal/oauthtest"
	"github.com/lectern/lectern/mcp"
	"github.com/lectern/lectern/vocab"
)

// mcpTRecorder records the requests an HTTP client sends and the answers
// it gets, for checking what an SDK client did.
type mcpTRecorder struct {
	base http.RoundTripper
	mu   sync.Mutex
	log  []mcpTExchange
}

type mcpTExchange struct {
	method, url string
	status      int
	challenge   string // WWW-Authenticate
}

func (r *mcpTRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.base.RoundTrip(req)
	if err == nil {
		r.mu.Lock()
		r.log = append(r.log, mcpTExchange{req.Method, req.URL.String(), resp.StatusCode, resp.Header.Get("WWW-Authenticate")})
		r.mu.Unlock()
	}
	return resp, err
}

func (r *mcpTRecorder) exchanges() []mcpTExchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.log)
}

// An MCP client that knows nothing but the /mcp URL of the open-registration
// site: it lists the public tools, calls a member tool, gets 401 with
// resource_metadata and scope, follows the metadata, registers by DCR, runs
// the code flow with PKCE and resource (a person signs in and consents),
// and calls the member tool again with its token. A tool needing more scope
// then makes it step up.
func TestMCPAgentSignsInFromNothing(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, nil)
		mcpURL := ts.open() + vocab.MCPPath
		rec := &mcpTRecorder{base: ts.client.Transport}
		httpClient := &http.Client{Transport: rec, Timeout: 30 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

		browser := oauthtest.NewBrowser(ts.addr)
		var authURLs []string
		handler, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
			DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
				ClientName: "Go SDK agent", RedirectURIs: []string{mcpRedirect}, TokenEndpointAuthMethod: "none",
				GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"},
			}},
			RedirectURL: mcpRedirect,
			Client:      httpClient,
			AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
				authURLs = append(authURLs, args.URL)
				out, err := browser.Authorize(args.URL, oauthtest.Options{Email: demo.StudentEmail, Password: demo.StudentPassword})
				if err != nil {
					return nil, err
				}
				code, err := out.Code()
				if err != nil {
					return nil, err
				}
				q := out.Redirect.Query()
				return &auth.AuthorizationResult{Code: code, State: q.Get("state"), Iss: q.Get("iss")}, nil
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		client := gomcp.NewClient(&gomcp.Implementation{Name: "go-sdk-agent", Version: "1"}, nil)
		cs, err := client.Connect(ctx, &gomcp.StreamableClientTransport{
			Endpoint: mcpURL, HTTPClient: httpClient, OAuthHandler: handler, MaxRetries: -1,
		}, nil)
		if err != nil {
			t.Fatalf("connecting with nothing but %s: %v", mcpURL, err)
		}
		defer cs.Close()
		if got := mcpTToolNames(t, cs); !slices.Equal(got, mcpTAnonymousTools) {
			t.Fatalf("before signing in: tools %v", got)
		}
		if len(authURLs) != 0 {
			t.Fatal("the client was sent to sign in before it needed to")
		}

		// The agent needs the member's enrollments.
		var enr mcp.MyEnrollmentsOutput
		mcpTCall(t, cs, "my_enrollments", nil, &enr)
		if enr.Total != 1 || enr.Enrollments[0].CourseSlug != "python-basics" {
			t.Fatalf("my_enrollments after signing in: %+v", enr)
		}

		// What happened on the wire: the challenge, discovery, DCR, token.
		var saw401, sawPRM, sawAS, sawRegister, sawToken bool
		for _, x := range rec.exchanges() {
			switch {
			case x.url == mcpURL && x.status == 401:
				saw401 = strings.Contains(x.challenge, `resource_metadata="`+ts.open()+vocab.ProtectedResourcePath+`"`) &&
					strings.Contains(x.challenge, `scope="account:read"`)
			case x.url == ts.open()+vocab.ProtectedResourcePath && x.status == 200:
				sawPRM = true
			case x.url == ts.open()+vocab.AuthorizationServerPath && x.status == 200:
				sawAS = true
			case x.url == ts.open()+vocab.RegistrationPath && x.status == 201:
				sawRegister = true
			case x.url == ts.open()+vocab.TokenPath && x.status == 200:
				sawToken = true
			}
		}
		if !saw401 || !sawPRM || !sawAS || !sawRegister || !sawToken {
			t.Errorf("401 with resource_metadata and scope %v, PRM %v, AS metadata %v, DCR %v, token %v:\n%+v",
				saw401, sawPRM, sawAS, sawRegister, sawToken, rec.exchanges())
		}
		if len(authURLs) != 1 {
			t.Fatalf("%d authorizations; want 1", len(authURLs))
		}
		u, err := url.Parse(authURLs[0])
		if err != nil {
			t.Fatal(err)
		}
		q := u.Query()
		if q.Get("resource") != ts.open() || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("scope") != "account:read" {
			t.Errorf("authorization request %s; want resource, S256 PKCE and scope account:read", authURLs[0])
		}

		// The token's tools are listed now.
		names := mcpTToolNames(t, cs)
		if !slices.Contains(names, "my_notifications") || slices.Contains(names, "mark_notification_read") {
			t.Errorf("after signing in with account:read: %v", names)
		}

		// A write tool needs account:write: 403 insufficient_scope, and the
		// SDK steps up (a second authorization asking for both scopes).
		res, raw := mcpTCallRaw(t, cs, "mark_notification_read", map[string]any{"id": 1})
		if !res.IsError || !strings.Contains(raw, "no notification") {
			t.Errorf("mark_notification_read after step-up: %s", raw)
		}
		if len(authURLs) != 2 {
			t.Fatalf("%d authorizations; want a step-up", len(authURLs))
		}
		u, _ = url.Parse(authURLs[1])
		if got := strings.Fields(u.Query().Get("scope")); !slices.Contains(got, "account:read") || !slices.Contains(got, "account:write") {
			t.Errorf("step-up scope %v; want account:read and account:write", got)
		}
		if names := mcpTToolNames(t, cs); !slices.Contains(names, "mark_notification_read") {
			t.Errorf("after the step-up: %v", names)
		}
	})
}
