package integration

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/lectern/lectern/internal/demo"
	"github.com/lectern/lectern/internal/oauthtest"
	"github.com/lectern/lectern/internal/server"
	"github.com/lectern/lectern/vocab"
)

// mcpRedirect is where the SDK client "listens" for the authorization
// response; the browser driver stops there.
const mcpRedirect = "http://127.0.0.1:49152/oauth/callback"

// sdkAuthorize plays the MCP SDK client from a 401 of a protected resource:
// discovery, registration, the code flow (a person signs in and consents in
// the browser driver), token exchange. It returns the token the SDK got.
func sdkAuthorize(t *testing.T, ts *testServer, resourceURL string, cfg *auth.AuthorizationCodeHandlerConfig, email, password string) string {
	t.Helper()
	ctx := context.Background()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, resourceURL, nil)
	resp, err := ts.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("%s without a token: %d; want 401", resourceURL, resp.StatusCode)
	}
	browser := oauthtest.NewBrowser(ts.addr)
	cfg.RedirectURL = mcpRedirect
	cfg.Client = ts.client
	cfg.AuthorizationCodeFetcher = func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		out, err := browser.Authorize(args.URL, oauthtest.Options{Email: email, Password: password})
		if err != nil {
			return nil, err
		}
		code, err := out.Code()
		if err != nil {
			return nil, err
		}
		q := out.Redirect.Query()
		return &auth.AuthorizationResult{Code: code, State: q.Get("state"), Iss: q.Get("iss")}, nil
	}
	h, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Authorize(ctx, req, resp); err != nil {
		t.Fatalf("the SDK's authorization failed: %v", err)
	}
	src, err := h.TokenSource(ctx)
	if err != nil || src == nil {
		t.Fatalf("token source: %v", err)
	}
	tok, err := src.Token()
	if err != nil {
		t.Fatal(err)
	}
	return tok.AccessToken
}

// On the open-registration site the SDK registers itself (RFC 7591).
func TestMCPSDKRegistersByDCR(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, nil)
		access := sdkAuthorize(t, ts, ts.open()+vocab.UserInfoPath, &auth.AuthorizationCodeHandlerConfig{
			DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
				ClientName: "Go SDK agent", RedirectURIs: []string{mcpRedirect}, TokenEndpointAuthMethod: "none",
				GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"},
			}},
		}, demo.StudentEmail, demo.StudentPassword)
		code, _, info := ts.bearerGet(t, ts.open()+vocab.UserInfoPath, access)
		if code != 200 || info["email"] != demo.StudentEmail {
			t.Fatalf("the SDK's token at userinfo: %d %v", code, info)
		}
	})
}

// On the vendor-platform site the SDK uses a Client ID Metadata Document
// served over https from an allowlisted host.
func TestMCPSDKUsesCIMD(t *testing.T) {
	var docHits atomic.Int32
	var docURL string
	docSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/clients/go-agent.json" {
			http.NotFound(w, r)
			return
		}
		docHits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "max-age=600")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"client_id": docURL, "client_name": "Go Agent (CIMD)", "redirect_uris": []string{mcpRedirect},
			"grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"},
			"token_endpoint_auth_method": "none", "client_uri": "https://agent.example.com", "software_id": "go-agent",
		})
	}))
	defer docSrv.Close()
	docURL = docSrv.URL + "/clients/go-agent.json"
	roots := x509.NewCertPool()
	roots.AddCert(docSrv.Certificate())

	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, &serverOptions{configure: func(c *server.Config) { c.CIMDTestRoots = roots }})
		host := strings.TrimPrefix(docSrv.URL, "https://")
		if _, err := ts.app.Platform.AllowCIMDHost(context.Background(), host, demo.AcademySlug, false); err != nil {
			t.Fatal(err)
		}
		access := sdkAuthorize(t, ts, ts.academy()+vocab.UserInfoPath, &auth.AuthorizationCodeHandlerConfig{
			ClientIDMetadataDocumentConfig: &auth.ClientIDMetadataDocumentConfig{URL: docURL},
		}, demo.OwnerEmail, demo.OwnerPassword)
		code, _, info := ts.bearerGet(t, ts.academy()+vocab.UserInfoPath, access)
		if code != 200 || info["email"] != demo.OwnerEmail {
			t.Fatalf("the SDK's token at userinfo: %d %v", code, info)
		}
		// Introspection-free check of what the token may do: it is an
		// operator token with read scopes only (the client is unreviewed).
		claims := decodeJWTClaims(t, access)
		if claims["client_id"] != docURL || strings.Contains(claims["scope"].(string), ":write") || !strings.Contains(claims["scope"].(string), "courses:read") {
			t.Fatalf("token claims %v; want the CIMD URL as client_id and read scopes only", claims)
		}
	})
	if docHits.Load() == 0 {
		t.Fatal("the metadata document was never fetched")
	}
}

func decodeJWTClaims(t *testing.T, jwt string) map[string]any {
	t.Helper()
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", jwt)
	}
	raw, err := base64URLDecode(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var claims map[string]any
	if err := json.Unmarshal(raw, &claims); err != nil {
		t.Fatal(err)
	}
	return claims
}
