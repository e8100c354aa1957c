package integration

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/lectern/lectern/discovery"
	"github.com/lectern/lectern/internal/server"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/vocab"
)

// An https site sends HSTS over https only and is never served over plain http: a request
// reaching the server directly over http (or through the trusted proxy
// saying X-Forwarded-Proto: http) is redirected (GET, HEAD) or refused
// (anything else); X-Forwarded-Proto is believed only from
// LECTERN_TRUSTED_PROXIES. The demo's http sites are unaffected.
func TestHTTPSSitesAreHTTPSOnly(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		// The test client connects from 127.0.0.1: that is the trusted
		// proxy (a load balancer terminating TLS).
		ts := startServer(t, b, &serverOptions{configure: func(c *server.Config) { c.TrustedProxies = "127.0.0.1/32" }})
		ctx := context.Background()
		site := &storage.Site{Slug: "secure", Name: "Secure School", Origin: "https://secure.test", RegistrationVariant: "B"}
		if err := ts.app.Platform.CreateSite(ctx, site); err != nil {
			t.Fatal(err)
		}
		const origin = "http://secure.test" // the URL the test client dials; the scheme is what reaches lectern

		// Through the load balancer: served, with HSTS.
		code, hdr, body := ts.get(t, origin, vocab.ProtectedResourcePath, "X-Forwarded-Proto", "https")
		var prm discovery.ProtectedResourceMetadata
		if code != 200 || json.Unmarshal(body, &prm) != nil || prm.Resource != "https://secure.test" {
			t.Fatalf("over https: %d %s", code, body)
		}
		if got := hdr.Get("Strict-Transport-Security"); got != "max-age=63072000" {
			t.Errorf("HSTS %q", got)
		}
		// Errors of the site carry it too.
		if code, hdr, _ := ts.get(t, origin, "/no/such/page", "X-Forwarded-Proto", "https"); code != 404 || hdr.Get("Strict-Transport-Security") == "" {
			t.Errorf("a 404 of an https site: %d HSTS %q", code, hdr.Get("Strict-Transport-Security"))
		}

		// Plain http: directly, or the proxy saying so.
		for name, hdr := range map[string][]string{"direct": nil, "the proxy says http": {"X-Forwarded-Proto", "http"}} {
			code, h, _ := ts.get(t, origin, vocab.AuthorizePath+"?client_id=x&state=y", hdr...)
			if code != http.StatusPermanentRedirect || h.Get("Location") != "https://secure.test"+vocab.AuthorizePath+"?client_id=x&state=y" {
				t.Errorf("%s: GET %d Location %q; want 308 to https", name, code, h.Get("Location"))
			}
			if got := h.Get("Strict-Transport-Security"); got != "" {
				t.Errorf("%s: HSTS %q on an answer over plain http (RFC 6797 §7.2)", name, got)
			}
			status, _, e := postFormHeaders(t, ts, origin+vocab.TokenPath, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"x"}}, hdr...)
			if status != http.StatusBadRequest || e["error"] != "invalid_request" || !strings.Contains(e["error_description"].(string), "https") {
				t.Errorf("%s: POST %d %v; want 400 saying to use https", name, status, e)
			}
		}

		// The demo's http origins are served over http as before, without HSTS.
		code, hdr, _ = ts.get(t, ts.academy(), vocab.ProtectedResourcePath)
		if code != 200 || hdr.Get("Strict-Transport-Security") != "" {
			t.Errorf("http demo site: %d HSTS %q", code, hdr.Get("Strict-Transport-Security"))
		}
	})
}

// Without LECTERN_TRUSTED_PROXIES, X-Forwarded-Proto from the peer is not
// believed: a client cannot claim https to be served over http.
func TestHTTPSForwardedProtoOnlyFromTrustedProxies(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	site := &storage.Site{Slug: "secure", Name: "Secure School", Origin: "https://secure.test", RegistrationVariant: "B"}
	if err := ts.app.Platform.CreateSite(context.Background(), site); err != nil {
		t.Fatal(err)
	}
	code, hdr, _ := ts.get(t, "http://secure.test", vocab.ProtectedResourcePath, "X-Forwarded-Proto", "https")
	if code != http.StatusPermanentRedirect || hdr.Get("Location") != "https://secure.test"+vocab.ProtectedResourcePath {
		t.Fatalf("an untrusted peer's X-Forwarded-Proto: %d Location %q", code, hdr.Get("Location"))
	}
}

// postFormHeaders posts a form with extra headers and decodes the JSON answer.
func postFormHeaders(t *testing.T, ts *testServer, u string, v url.Values, hdr ...string) (int, http.Header, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(v.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := ts.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&body)
	return resp.StatusCode, resp.Header, body
}
