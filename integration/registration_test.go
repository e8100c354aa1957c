package integration

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lectern/lectern/internal/demo"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/vocab"
)

// sourceIP hands out distinct loopback source addresses, so that tests are
// not throttled by the per-IP registration limit they do not test.
var sourceIP atomic.Int32

func (ts *testServer) clientFrom(ip string) *http.Client {
	d := &net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	addr := ts.addr
	return &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, addr)
		}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

func nextSourceIP() string {
	return fmt.Sprintf("127.0.%d.%d", 10+sourceIP.Load()/250, 2+sourceIP.Add(1)%250)
}

// register posts raw to origin's registration endpoint.
func (ts *testServer) register(t *testing.T, c *http.Client, origin, contentType string, body []byte) (int, http.Header, map[string]any) {
	t.Helper()
	resp, err := c.Post(origin+vocab.RegistrationPath, contentType, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, resp.Header, out
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

func TestRegistrationVariantB(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	loop := []string{"http://127.0.0.1:33418/callback"}
	cases := []struct {
		name        string
		contentType string
		body        []byte
		status      int
		code        string
		field       string // the description must name it
	}{
		{"public loopback client", "application/json", mustJSON(map[string]any{"client_name": "CLI", "redirect_uris": loop}), 201, "", ""},
		{"[::1] and localhost", "application/json", mustJSON(map[string]any{"client_name": "CLI", "redirect_uris": []string{"http://[::1]:5000/cb", "http://localhost/cb"}}), 201, "", ""},
		{"https callback", "application/json", mustJSON(map[string]any{"client_name": "Web", "redirect_uris": []string{"https://app.example.com/cb"}}), 400, "invalid_redirect_uri", "redirect_uris"},
		{"custom scheme", "application/json", mustJSON(map[string]any{"client_name": "App", "redirect_uris": []string{"com.example.app:/cb"}}), 400, "invalid_redirect_uri", "redirect_uris"},
		{"javascript: URI", "application/json", mustJSON(map[string]any{"client_name": "X", "redirect_uris": []string{"javascript:alert(1)"}}), 400, "invalid_redirect_uri", "redirect_uris"},
		{"data: URI", "application/json", mustJSON(map[string]any{"client_name": "X", "redirect_uris": []string{"data:text/html,<script>alert(1)</script>"}}), 400, "invalid_redirect_uri", "redirect_uris"},
		{"fragment", "application/json", mustJSON(map[string]any{"client_name": "X", "redirect_uris": []string{"http://127.0.0.1/cb#frag"}}), 400, "invalid_redirect_uri", "redirect_uris"},
		{"non-loopback http", "application/json", mustJSON(map[string]any{"client_name": "X", "redirect_uris": []string{"http://192.168.1.5/cb"}}), 400, "invalid_redirect_uri", "redirect_uris"},
		{"port 0", "application/json", mustJSON(map[string]any{"client_name": "X", "redirect_uris": []string{"http://127.0.0.1:0/cb"}}), 400, "invalid_redirect_uri", "invalid port"},
		{"empty port", "application/json", mustJSON(map[string]any{"client_name": "X", "redirect_uris": []string{"http://[::1]:/cb"}}), 400, "invalid_redirect_uri", "empty port"},
		{"no redirect URIs", "application/json", mustJSON(map[string]any{"client_name": "X"}), 400, "invalid_redirect_uri", "redirect_uris"},
		{"too many redirect URIs", "application/json", mustJSON(map[string]any{"client_name": "X", "redirect_uris": strings.Split(strings.Repeat("http://127.0.0.1/cb,", 11)[:11*20-1], ",")}), 400, "invalid_redirect_uri", "redirect_uris"},
		{"client_credentials grant", "application/json", mustJSON(map[string]any{"redirect_uris": loop, "grant_types": []string{"client_credentials"}}), 400, "invalid_client_metadata", "grant_types"},
		{"jwt-bearer grant", "application/json", mustJSON(map[string]any{"redirect_uris": loop, "grant_types": []string{"authorization_code", "urn:ietf:params:oauth:grant-type:jwt-bearer"}}), 400, "invalid_client_metadata", "grant_types"},
		{"token response type", "application/json", mustJSON(map[string]any{"redirect_uris": loop, "response_types": []string{"token"}}), 400, "invalid_client_metadata", "response_types"},
		{"private_key_jwt", "application/json", mustJSON(map[string]any{"redirect_uris": loop, "token_endpoint_auth_method": "private_key_jwt"}), 400, "invalid_client_metadata", "token_endpoint_auth_method"},
		{"client_secret_basic", "application/json", mustJSON(map[string]any{"redirect_uris": loop, "token_endpoint_auth_method": "client_secret_basic"}), 400, "invalid_client_metadata", "token_endpoint_auth_method"},
		{"jwks", "application/json", mustJSON(map[string]any{"redirect_uris": loop, "jwks": map[string]any{"keys": []any{}}}), 400, "invalid_client_metadata", "jwks"},
		{"javascript: logo", "application/json", mustJSON(map[string]any{"redirect_uris": loop, "logo_uri": "javascript:alert(1)"}), 400, "invalid_client_metadata", "logo_uri"},
		{"operator and account scopes", "application/json", mustJSON(map[string]any{"redirect_uris": loop, "scope": "courses:read account:read"}), 400, "invalid_client_metadata", "scope"},
		{"unknown scope", "application/json", mustJSON(map[string]any{"redirect_uris": loop, "scope": "openid admin:everything"}), 400, "invalid_client_metadata", "scope"},
		{"client_name too long", "application/json", mustJSON(map[string]any{"redirect_uris": loop, "client_name": strings.Repeat("n", 201)}), 400, "invalid_client_metadata", "client_name"},
		{"bidi in client_name", "application/json", mustJSON(map[string]any{"redirect_uris": loop, "client_name": "Safe\u202eevil"}), 400, "invalid_client_metadata", "client_name"},
		{"redirect_uris as a string", "application/json", []byte(`{"redirect_uris":"http://127.0.0.1/cb"}`), 400, "invalid_client_metadata", "redirect_uris"},
		{"not JSON", "application/json", []byte(`client_name=x`), 400, "invalid_client_metadata", ""},
		{"form body", "application/x-www-form-urlencoded", []byte(`redirect_uris=http://127.0.0.1/cb`), 400, "invalid_client_metadata", "application/json"},
		{"two JSON values", "application/json", []byte(`{"redirect_uris":["http://127.0.0.1/cb"]}{}`), 400, "invalid_client_metadata", ""},
		{"a name that is not UTF-8", "application/json", []byte("{\"redirect_uris\":[\"http://127.0.0.1/cb\"],\"client_name\":\"\xff\"}"), 400, "invalid_client_metadata", "UTF-8"},
		{"a member twice", "application/json", []byte(`{"redirect_uris":["http://127.0.0.1/cb"],"scope":"openid","scope":"courses:read"}`), 400, "invalid_client_metadata", "scope"},
		{"oversized body", "application/json", mustJSON(map[string]any{"redirect_uris": loop, "client_uri": "https://x/" + strings.Repeat("a", 17<<10)}), 400, "invalid_client_metadata", "16 KiB"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, hdr, body := ts.register(t, ts.clientFrom(nextSourceIP()), ts.open(), tc.contentType, tc.body)
			if status != tc.status {
				t.Fatalf("status %d %v; want %d", status, body, tc.status)
			}
			if hdr.Get("Cache-Control") != "no-store" {
				t.Errorf("Cache-Control %q", hdr.Get("Cache-Control"))
			}
			if tc.status != 201 {
				desc, _ := body["error_description"].(string)
				if body["error"] != tc.code || !strings.Contains(desc, tc.field) {
					t.Fatalf("error %v; want %s naming %q", body, tc.code, tc.field)
				}
				return
			}
			if id, _ := body["client_id"].(string); id == "" || body["token_endpoint_auth_method"] != "none" || body["client_secret"] != nil {
				t.Fatalf("registration response %v", body)
			}
		})
	}
}

func TestRegistrationAudienceAndSecrets(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	ctx := context.Background()
	open, _ := ts.app.Store.SiteBySlug(ctx, demo.OpenSlug)
	c := ts.clientFrom(nextSourceIP())
	loop := []string{"http://127.0.0.1/cb"}

	_, _, member := ts.register(t, c, ts.open(), "application/json", mustJSON(map[string]any{"client_name": "Agent", "redirect_uris": loop}))
	row, err := ts.app.Store.ClientByID(ctx, open.ID, member["client_id"].(string))
	if err != nil || row.Audience != storage.AudienceMember || row.Source != storage.SourceDCR || row.Reviewed {
		t.Fatalf("no-scope registration: %+v %v; want an unreviewed member DCR client", row, err)
	}
	if member["scope"] != "openid profile email account:read account:write" {
		t.Fatalf("default scope %v; want the member least privilege", member["scope"])
	}
	_, _, op := ts.register(t, c, ts.open(), "application/json", mustJSON(map[string]any{"redirect_uris": loop, "scope": "openid courses:read"}))
	if row, _ := ts.app.Store.ClientByID(ctx, open.ID, op["client_id"].(string)); row.Audience != storage.AudienceOperator {
		t.Fatalf("operator-scope registration made a %s client", row.Audience)
	}
	_, _, conf := ts.register(t, c, ts.open(), "application/json", mustJSON(map[string]any{"redirect_uris": loop, "token_endpoint_auth_method": "client_secret_post"}))
	secret, _ := conf["client_secret"].(string)
	if secret == "" || conf["token_endpoint_auth_method"] != "client_secret_post" || conf["client_secret_expires_at"] != float64(0) {
		t.Fatalf("confidential registration %v", conf)
	}
	row, _ = ts.app.Store.ClientByID(ctx, open.ID, conf["client_id"].(string))
	sum := sha256.Sum256([]byte(secret))
	if !bytes.Equal(row.SecretHash, sum[:]) || bytes.Contains(row.SecretHash, []byte(secret)) {
		t.Fatal("the stored secret is not its SHA-256 hash")
	}
}

func TestRegistrationRateLimit(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	c := ts.clientFrom(nextSourceIP())
	body := mustJSON(map[string]any{"client_name": "Flood", "redirect_uris": []string{"http://127.0.0.1/cb"}})
	for i := 0; i < 10; i++ {
		if status, _, b := ts.register(t, c, ts.open(), "application/json", body); status != 201 {
			t.Fatalf("registration %d: %d %v", i+1, status, b)
		}
	}
	status, hdr, b := ts.register(t, c, ts.open(), "application/json", body)
	if status != 429 || hdr.Get("Retry-After") == "" || b["error"] == nil {
		t.Fatalf("11th registration in a minute: %d %q %v; want 429 with Retry-After", status, hdr.Get("Retry-After"), b)
	}
	// Another address is not throttled by this one, nor is the other site.
	if status, _, _ := ts.register(t, ts.clientFrom(nextSourceIP()), ts.open(), "application/json", body); status != 201 {
		t.Fatalf("another address: %d", status)
	}
}

func TestRegistrationVariantA(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	ctx := context.Background()
	academy, _ := ts.app.Store.SiteBySlug(ctx, demo.AcademySlug)
	before, _ := ts.app.Store.ListClients(ctx, academy.ID, "")
	loop := []string{"http://127.0.0.1:41000/callback"}
	for _, tc := range []struct {
		name       string
		clientName string
		redirects  []string
		status     int
		code       string
	}{
		{"exact name", demo.VendorClientName, loop, 201, ""},
		{"trimmed, other case", "  demo VENDOR platform ", loop, 201, ""},
		{"unknown name", "Some Other Tool", loop, 400, "invalid_client_metadata"},
		{"no name", "", loop, 400, "invalid_client_metadata"},
		{"homoglyph (Cyrillic o)", "Dem\u043e Vendor Platform", loop, 400, "invalid_client_metadata"},
		{"zero-width space", "Demo Vendor\u200b Platform", loop, 400, "invalid_client_metadata"},
		{"bidi override", "\u202eDemo Vendor Platform", loop, 400, "invalid_client_metadata"},
		{"redirect not registered for the vendor", demo.VendorClientName, []string{"https://evil.example/cb"}, 400, "invalid_redirect_uri"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, _, body := ts.register(t, ts.clientFrom(nextSourceIP()), ts.academy(), "application/json",
				mustJSON(map[string]any{"client_name": tc.clientName, "redirect_uris": tc.redirects}))
			if status != tc.status {
				t.Fatalf("%d %v; want %d", status, body, tc.status)
			}
			if tc.status == 201 {
				if body["client_id"] != demo.VendorClientID || body["token_endpoint_auth_method"] != "none" {
					t.Fatalf("vendor registration %v", body)
				}
				if uris, _ := body["redirect_uris"].([]any); len(uris) != 1 || uris[0] != demo.LoopbackRedirect {
					t.Fatalf("redirect_uris %v; want the integration's", body["redirect_uris"])
				}
				return
			}
			if body["error"] != tc.code {
				t.Fatalf("error %v; want %s", body, tc.code)
			}
		})
	}
	after, _ := ts.app.Store.ListClients(ctx, academy.ID, "")
	if len(after) != len(before) {
		t.Fatalf("Variant A registration created clients: %d before, %d after", len(before), len(after))
	}
}

// A registered (DCR) client and the vendor client complete the whole flow.
func TestRegisteredClientsCompleteTheFlow(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, nil)
		_, _, reg := ts.register(t, ts.clientFrom(nextSourceIP()), ts.open(), "application/json",
			mustJSON(map[string]any{"client_name": "My Agent", "redirect_uris": []string{"http://127.0.0.1/callback"}}))
		f := newFlow(t, ts, ts.open(), reg["client_id"].(string), "openid", "account:read")
		tok, err := f.exchange(f.authorize(demo.StudentEmail, demo.StudentPassword))
		if err != nil {
			t.Fatalf("DCR client: %v", err)
		}
		if code, _, _ := f.userinfo(tok.AccessToken); code != 200 {
			t.Fatalf("DCR client's token at userinfo: %d", code)
		}

		v := newFlow(t, ts, ts.academy(), demo.VendorClientID, "openid", "courses:read")
		vtok, err := v.exchange(v.authorize(demo.OwnerEmail, demo.OwnerPassword))
		if err != nil {
			t.Fatalf("vendor client: %v", err)
		}
		if code, _, info := v.userinfo(vtok.AccessToken); code != 200 || info["roles"] == nil {
			t.Fatalf("vendor client's token: %d %v", code, info)
		}
	})
}

// Abandoned registrations are purged; used ones stay.
func TestUnusedRegistrationsArePurged(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	ctx := context.Background()
	c := ts.clientFrom(nextSourceIP())
	reg := func() string {
		_, _, r := ts.register(t, c, ts.open(), "application/json", mustJSON(map[string]any{"client_name": "A", "redirect_uris": []string{"http://127.0.0.1/callback"}}))
		return r["client_id"].(string)
	}
	unused, used := reg(), reg()
	f := newFlow(t, ts, ts.open(), used, "openid")
	if _, err := f.exchange(f.authorize(demo.StudentEmail, demo.StudentPassword)); err != nil {
		t.Fatal(err)
	}
	n, err := ts.app.Platform.PurgeUnusedClients(ctx, time.Now().Add(25*time.Hour), 24*time.Hour)
	if err != nil || n != 1 {
		t.Fatalf("purged %d (%v); want 1", n, err)
	}
	open, _ := ts.app.Store.SiteBySlug(ctx, demo.OpenSlug)
	if _, err := ts.app.Store.ClientByID(ctx, open.ID, unused); err == nil {
		t.Fatal("the unused registration survived")
	}
	if _, err := ts.app.Store.ClientByID(ctx, open.ID, used); err != nil {
		t.Fatalf("the used registration was purged: %v", err)
	}
}
