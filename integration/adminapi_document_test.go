package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lectern/lectern/authserver/scope"
	"github.com/lectern/lectern/internal/openapitest"
	"github.com/lectern/lectern/vocab"
)

// The served /openapi.json is a valid OpenAPI 3.0 document (kin-openapi's
// loader and Validate), names this site's API server and authorization
// server (as its metadata does) with every operator scope, and differs
// between the two demo sites only in those URLs.
func TestAdminOpenAPIDocument(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	docs := map[string]map[string]any{}
	for _, origin := range []string{ts.academy(), ts.open()} {
		code, hdr, body := ts.get(t, origin, vocab.OpenAPIPath)
		if code != http.StatusOK || hdr.Get("Content-Type") != "application/json" {
			t.Fatalf("GET %s/openapi.json: %d %s", origin, code, hdr.Get("Content-Type"))
		}
		if hdr.Get("ETag") == "" || hdr.Get("Cache-Control") != "public, max-age=300" {
			t.Fatalf("caching headers %v", hdr)
		}
		if code, _, body := ts.get(t, origin, vocab.OpenAPIPath, "If-None-Match", hdr.Get("ETag")); code != http.StatusNotModified || len(body) != 0 {
			t.Fatalf("revalidation with the ETag: %d", code)
		}
		admValidateOpenAPI(t, body)
		var doc map[string]any
		if err := json.Unmarshal(body, &doc); err != nil {
			t.Fatal(err)
		}
		docs[origin] = doc

		var meta struct {
			AuthorizationEndpoint string   `json:"authorization_endpoint"`
			TokenEndpoint         string   `json:"token_endpoint"`
			ScopesSupported       []string `json:"scopes_supported"`
		}
		ts.getJSON(t, origin, vocab.AuthorizationServerPath, http.StatusOK, &meta)
		var d struct {
			OpenAPI string `json:"openapi"`
			Servers []struct {
				URL string `json:"url"`
			} `json:"servers"`
			Components struct {
				SecuritySchemes struct {
					OAuth2 struct {
						Type  string `json:"type"`
						Flows struct {
							AuthorizationCode struct {
								AuthorizationURL string            `json:"authorizationUrl"`
								TokenURL         string            `json:"tokenUrl"`
								Scopes           map[string]string `json:"scopes"`
							} `json:"authorizationCode"`
						} `json:"flows"`
					} `json:"oauth2"`
				} `json:"securitySchemes"`
			} `json:"components"`
		}
		if err := json.Unmarshal(body, &d); err != nil {
			t.Fatal(err)
		}
		flow := d.Components.SecuritySchemes.OAuth2.Flows.AuthorizationCode
		if d.OpenAPI[:4] != "3.0." || len(d.Servers) != 1 || d.Servers[0].URL != origin+"/api/v1" ||
			d.Components.SecuritySchemes.OAuth2.Type != "oauth2" ||
			flow.AuthorizationURL != meta.AuthorizationEndpoint || flow.TokenURL != meta.TokenEndpoint {
			t.Fatalf("%s: openapi %s, servers %v, flow %s %s; metadata %s %s", origin, d.OpenAPI, d.Servers,
				flow.AuthorizationURL, flow.TokenURL, meta.AuthorizationEndpoint, meta.TokenEndpoint)
		}
		var listed []string
		for s := range flow.Scopes {
			listed = append(listed, s)
		}
		want := scope.OperatorScopes()
		sort.Strings(listed)
		sort.Strings(want)
		if d := cmp.Diff(want, listed); d != "" {
			t.Errorf("%s: the document's scopes are not the operator scopes (-want +got):\n%s", origin, d)
		}
	}
	diffs := openapitest.Diff(docs[ts.academy()], docs[ts.open()])
	want := []string{
		fmt.Sprintf(".components.securitySchemes.oauth2.flows.authorizationCode.authorizationUrl: %s/oauth/authorize | %s/oauth/authorize", ts.academy(), ts.open()),
		fmt.Sprintf(".components.securitySchemes.oauth2.flows.authorizationCode.tokenUrl: %s/api/oauth/token | %s/api/oauth/token", ts.academy(), ts.open()),
		fmt.Sprintf(".servers[0].url: %s/api/v1 | %s/api/v1", ts.academy(), ts.open()),
	}
	if d := cmp.Diff(want, diffs); d != "" {
		t.Errorf("the two sites' documents differ in more than their URLs (-want +got):\n%s", d)
	}
}
