package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/google/go-cmp/cmp"

	"github.com/lectern/lectern/discovery"
	"github.com/lectern/lectern/internal/demo"
	"github.com/lectern/lectern/internal/server"
	"github.com/lectern/lectern/storage/sqlstore/sqltest"
	"github.com/lectern/lectern/storage/storagetest"
	"github.com/lectern/lectern/vocab"
)

// The acceptance of the foundation: the two demo origins answer as two
// sites, with their own issuer, keys and resource; an unknown host is 404.
func TestTwoSitesOnOnePort(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, nil)
		type site struct {
			origin string
			as     discovery.ServerMetadata
			oidc   discovery.ServerMetadata
			prm    discovery.ProtectedResourceMetadata
			jwks   jose.JSONWebKeySet
		}
		sites := []*site{{origin: ts.academy()}, {origin: ts.open()}}
		for _, s := range sites {
			hdr := ts.getJSON(t, s.origin, vocab.AuthorizationServerPath, 200, &s.as)
			if hdr.Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(hdr.Get("Cache-Control"), "max-age") {
				t.Errorf("%s metadata headers: CORS %q, Cache-Control %q", s.origin, hdr.Get("Access-Control-Allow-Origin"), hdr.Get("Cache-Control"))
			}
			ts.getJSON(t, s.origin, vocab.OpenIDConfigurationPath, 200, &s.oidc)
			ts.getJSON(t, s.origin, vocab.ProtectedResourcePath, 200, &s.prm)
			ts.getJSON(t, s.origin, vocab.JWKSPath, 200, &s.jwks)

			if s.as.Issuer != s.origin {
				t.Errorf("issuer %q; want the origin %q", s.as.Issuer, s.origin)
			}
			if diff := cmp.Diff(s.as, s.oidc); diff != "" {
				t.Errorf("%s: openid-configuration differs from the AS metadata (-as +oidc):\n%s", s.origin, diff)
			}
			if s.prm.Resource != s.origin || len(s.prm.AuthorizationServers) != 1 || s.prm.AuthorizationServers[0] != s.origin {
				t.Errorf("PRM %+v; want resource and authorization server %q", s.prm, s.origin)
			}
			for _, ep := range []string{s.as.AuthorizationEndpoint, s.as.TokenEndpoint, s.as.UserInfoEndpoint, s.as.RevocationEndpoint, s.as.RegistrationEndpoint, s.as.JWKSURI} {
				if !strings.HasPrefix(ep, s.origin+"/") {
					t.Errorf("endpoint %q is not at the site's origin %q", ep, s.origin)
				}
			}
			if s.as.AuthorizationEndpoint != s.origin+"/oauth/authorize" || s.as.TokenEndpoint != s.origin+"/api/oauth/token" ||
				s.as.UserInfoEndpoint != s.origin+"/api/oauth/userinfo" || s.as.RevocationEndpoint != s.origin+"/api/oauth/revoke" ||
				s.as.RegistrationEndpoint != s.origin+"/api/oauth/register" {
				t.Errorf("endpoints do not use the spec's paths: %+v", s.as)
			}
			if !cmp.Equal(s.as.CodeChallengeMethodsSupported, []string{"S256"}) || !s.as.AuthorizationResponseISSParameterSupported ||
				!cmp.Equal(s.as.TokenEndpointAuthMethodsSupported, []string{"none", "client_secret_post"}) {
				t.Errorf("PKCE/iss/auth-method fields wrong: %+v", s.as)
			}
			if len(s.jwks.Keys) != 1 || s.jwks.Keys[0].Algorithm != "ES256" || !s.jwks.Keys[0].Valid() || !s.jwks.Keys[0].IsPublic() {
				t.Fatalf("%s JWKS: %+v; want one public ES256 key", s.origin, s.jwks.Keys)
			}
		}
		a, o := sites[0], sites[1]
		if a.as.Issuer == o.as.Issuer {
			t.Fatal("both sites have the same issuer")
		}
		if a.jwks.Keys[0].KeyID == o.jwks.Keys[0].KeyID {
			t.Fatal("both sites publish the same kid")
		}
		ta, _ := a.jwks.Keys[0].Thumbprint(0x5) // crypto.SHA256
		to, _ := o.jwks.Keys[0].Thumbprint(0x5)
		if string(ta) == string(to) {
			t.Fatal("both sites publish the same key")
		}

		code, hdr, body := ts.get(t, ts.academy(), vocab.AuthorizationServerPath, "Host", "unknown.test")
		var e oauthError
		if code != 404 || hdr.Get("Content-Type") != "application/json" || json.Unmarshal(body, &e) != nil || e.Error != "not_found" {
			t.Fatalf("unknown host: %d %s %s; want 404 JSON not_found", code, hdr.Get("Content-Type"), body)
		}
	})
}

func TestMetadataTellsTheTruthAboutIDTokens(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	ctx := context.Background()
	s, err := ts.app.Store.SiteBySlug(ctx, demo.OpenSlug)
	if err != nil {
		t.Fatal(err)
	}
	s.IDTokensEnabled = false
	if err := ts.app.Platform.UpdateSite(ctx, s); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, func() error {
		var raw map[string]any
		ts.getJSON(t, ts.open(), vocab.AuthorizationServerPath, 200, &raw)
		for _, f := range []string{"jwks_uri", "id_token_signing_alg_values_supported"} {
			if _, ok := raw[f]; ok {
				return fmt.Errorf("%s still advertised", f)
			}
		}
		return nil
	})
	var raw map[string]any
	ts.getJSON(t, ts.academy(), vocab.AuthorizationServerPath, 200, &raw)
	if _, ok := raw["jwks_uri"]; !ok {
		t.Fatal("the other site lost jwks_uri")
	}
	for _, f := range []string{"registration_endpoint", "client_id_metadata_document_supported", "authorization_response_iss_parameter_supported", "code_challenge_methods_supported", "scopes_supported", "grant_types_supported"} {
		if _, ok := raw[f]; !ok {
			t.Errorf("AS metadata lacks %s", f)
		}
	}
}

// A change made through one replica reaches another replica through the
// cache's broadcast, well before its site-cache TTL (an hour here).
func TestSiteChangeReachesOtherReplica(t *testing.T) {
	b := backend{name: "postgres+redis", databaseURL: sqltest.PostgresSchemaURL(t), redisURL: storagetest.RedisURL(t)}
	prefix := "lectern-test-" + randomHex(6) + ":"
	sameRedis := func(c *server.Config) { c.RedisPrefix = prefix; c.SiteCacheTTL = time.Hour }
	first := startServer(t, b, &serverOptions{configure: sameRedis})
	second := startServer(t, b, &serverOptions{configure: sameRedis, originPort: first.port})

	var before discovery.ProtectedResourceMetadata
	second.getJSON(t, second.academy(), vocab.ProtectedResourcePath, 200, &before)
	if before.ResourceName != demo.AcademyName {
		t.Fatalf("resource_name %q", before.ResourceName)
	}
	ctx := context.Background()
	s, err := first.app.Store.SiteBySlug(ctx, demo.AcademySlug)
	if err != nil {
		t.Fatal(err)
	}
	s.Name = "Renamed Academy"
	if err := first.app.Platform.UpdateSite(ctx, s); err != nil {
		t.Fatal(err)
	}
	eventually(t, 3*time.Second, func() error {
		var after discovery.ProtectedResourceMetadata
		second.getJSON(t, second.academy(), vocab.ProtectedResourcePath, 200, &after)
		if after.ResourceName != "Renamed Academy" {
			return fmt.Errorf("second replica still says %q", after.ResourceName)
		}
		return nil
	})
}

// Host headers are attacker input: each malformed form gets a 4xx, never a
// 5xx or a panic, and the server keeps serving.
func TestMalformedHostHeaders(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	addr := fmt.Sprintf("127.0.0.1:%d", ts.srvPort())
	for _, tc := range []struct {
		name, host string
		want       int
		json       bool // the answer comes from Lectern, not from net/http's own checks
	}{
		{"empty", "", 400, true},
		{"user-info", "user@localhost:" + fmt.Sprint(ts.port), 400, false},
		{"unicode", "académie.test", 400, false},
		{"over 255 bytes", strings.Repeat("a", 300) + ".test", 400, true},
		{"port out of range", "localhost:99999", 400, true},
		{"trailing dot", "localhost.:" + fmt.Sprint(ts.port), 404, true},
		{"unknown", "unknown.test", 404, true},
		{"bracket junk", "[::1", 400, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, ctype := rawGet(t, addr, tc.host, vocab.AuthorizationServerPath)
			if status != tc.want {
				t.Fatalf("Host %q: status %d; want %d", tc.host, status, tc.want)
			}
			if tc.json && !strings.HasPrefix(ctype, "application/json") {
				t.Fatalf("Host %q: Content-Type %q; want JSON", tc.host, ctype)
			}
		})
	}
	var ok discovery.ServerMetadata
	ts.getJSON(t, ts.academy(), vocab.AuthorizationServerPath, 200, &ok)
}

func (ts *testServer) srvPort() int {
	u, _ := url.Parse("http://" + ts.addr)
	var p int
	fmt.Sscan(u.Port(), &p)
	return p
}

// rawGet sends a hand-written request so that any Host value reaches the
// server byte for byte.
func rawGet(t *testing.T, addr, host, path string) (int, string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", path, host)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Content-Type")
}

// A corrupt key row takes down that site's keys (503, logged with site and
// kid) and nothing else.
func TestCorruptKeyRowIsolated(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, nil)
		ctx := context.Background()
		academy, err := ts.app.Store.SiteBySlug(ctx, demo.AcademySlug)
		if err != nil {
			t.Fatal(err)
		}
		keys, err := ts.app.Store.SiteKeys(ctx, academy.ID, time.Time{})
		if err != nil || len(keys) != 1 {
			t.Fatalf("keys %v %v", keys, err)
		}
		if err := ts.app.Store.Exec(ctx, "UPDATE site_keys SET public_jwk = ? WHERE kid = ?", `{"kty":"EC","crv":"P-256","x":"garbage"}`, keys[0].KID); err != nil {
			t.Fatal(err)
		}
		ts.app.Keys.Invalidate(academy.ID)

		code, hdr, body := ts.get(t, ts.academy(), vocab.JWKSPath)
		var e oauthError
		if code != 503 || json.Unmarshal(body, &e) != nil || e.Error != "temporarily_unavailable" || hdr.Get("Retry-After") == "" {
			t.Fatalf("JWKS of the corrupt site: %d %s; want 503 temporarily_unavailable with Retry-After", code, body)
		}
		if strings.Contains(string(body), keys[0].KID) {
			t.Error("the error body names the kid; only the log should")
		}
		logs := ts.logs.String()
		if !strings.Contains(logs, keys[0].KID) || !strings.Contains(logs, `"site":"demo-academy"`) {
			t.Fatalf("log does not name site and kid:\n%s", logs)
		}
		var jwks jose.JSONWebKeySet
		ts.getJSON(t, ts.open(), vocab.JWKSPath, 200, &jwks)
		if len(jwks.Keys) != 1 {
			t.Fatalf("the other site's JWKS: %+v", jwks)
		}
	})
}
