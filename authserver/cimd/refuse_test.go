package cimd

import (
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestFetchRefusesRedirects(t *testing.T) {
	var target *testServer
	target = newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(mustJSON(t, validDoc(target.url(otherHost, r.URL.Path))))
	}))
	for _, code := range []int{301, 302, 303, 307, 308} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			src := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, target.url(otherHost, "/client.json"), code)
			}))
			e := newEnv(t, Options{AllowLoopbackForTests: true})
			_, err := e.f.Fetch(t.Context(), src.url(testHost, "/client.json"))
			wantError(t, err, "answered with a redirect")
			if src.hits.Load() != 1 {
				t.Errorf("source hit %d times", src.hits.Load())
			}
		})
	}
	if n := target.hits.Load(); n != 0 {
		t.Errorf("the redirect target got %d requests", n)
	}
}

func TestFetchRefusesStatus(t *testing.T) {
	for _, code := range []int{201, 204, 304, 400, 404, 500, 503} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			var srv *testServer
			srv = newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(code)
				_, _ = w.Write(mustJSON(t, validDoc(srv.url(testHost, r.URL.Path))))
			}))
			e := newEnv(t, Options{AllowLoopbackForTests: true})
			_, err := e.f.Fetch(t.Context(), srv.url(testHost, "/client.json"))
			want := fmt.Sprintf("HTTP status %d instead of 200", code)
			if code == 304 {
				want = "redirect" // every 3xx is a redirect class answer
			}
			wantError(t, err, want)
		})
	}
}

func TestFetchContentType(t *testing.T) {
	tests := []struct {
		ct string // "-": no Content-Type at all
		ok bool
	}{
		{"application/json", true},
		{"application/json; charset=utf-8", true},
		{"Application/JSON", true},
		{"application/vnd.acme.client+json", true},
		{"application/json; charset", true}, // malformed parameter, right type
		{"text/html", false},
		{"text/html; charset=utf-8", false},
		{"text/plain", false},
		{"application/javascript", false},
		{"application/json-seq", false},
		{"text/json", false},
		{"-", false},
	}
	for _, tc := range tests {
		t.Run(tc.ct, func(t *testing.T) {
			var srv *testServer
			srv = newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.ct == "-" {
					w.Header()["Content-Type"] = nil // no sniffing either
				} else {
					w.Header().Set("Content-Type", tc.ct)
				}
				_, _ = w.Write(mustJSON(t, validDoc(srv.url(testHost, r.URL.Path))))
			}))
			e := newEnv(t, Options{AllowLoopbackForTests: true})
			_, err := e.f.Fetch(t.Context(), srv.url(testHost, "/client.json"))
			if tc.ok {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantError(t, err, "not served as application/json")
		})
	}
}

// padded returns a valid document for clientID of exactly size bytes.
func padded(t *testing.T, clientID string, size int) []byte {
	doc := validDoc(clientID)
	doc["x_padding"] = ""
	n := len(mustJSON(t, doc))
	if n > size {
		t.Fatalf("document already %d bytes", n)
	}
	doc["x_padding"] = strings.Repeat("p", size-n)
	b := mustJSON(t, doc)
	if len(b) != size {
		t.Fatalf("padded to %d bytes, want %d", len(b), size)
	}
	return b
}

func TestFetchSizeCap(t *testing.T) {
	tests := []struct {
		name     string
		maxBytes int64
		size     int
		chunked  bool // no Content-Length, so the cap is found by reading
		ok       bool
	}{
		{"exactly 16 KiB", 0, 16 << 10, false, true},
		{"16 KiB + 1", 0, 16<<10 + 1, false, false},
		{"16 KiB + 1 chunked", 0, 16<<10 + 1, true, false},
		{"1 MiB chunked", 0, 1 << 20, true, false},
		{"custom cap", 1024, 1025, false, false},
		{"custom cap chunked", 1024, 1025, true, false},
		{"custom cap exact", 1024, 1024, true, true},
		// Reading stops at the cap: an endless body fails as too large, not
		// by running into the timeout.
		{"endless", 0, -1, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var srv *testServer
			srv = newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				if tc.size < 0 {
					_, _ = w.Write([]byte(`{"x":"`))
					chunk := []byte(strings.Repeat("x", 4096))
					for r.Context().Err() == nil {
						if _, err := w.Write(chunk); err != nil {
							return
						}
					}
					return
				}
				body := padded(t, srv.url(testHost, r.URL.Path), tc.size)
				if tc.chunked {
					_, _ = w.Write(body[:100])
					w.(http.Flusher).Flush()
					_, _ = w.Write(body[100:])
					return
				}
				w.Header().Set("Content-Length", fmt.Sprint(len(body)))
				_, _ = w.Write(body)
			}))
			e := newEnv(t, Options{AllowLoopbackForTests: true, MaxBytes: tc.maxBytes})
			_, err := e.f.Fetch(t.Context(), srv.url(testHost, "/client.json"))
			if tc.ok {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantError(t, err, "is larger than")
			if e.cache.setCount() != 0 {
				t.Error("an oversized document was cached")
			}
		})
	}
}

func TestFetchRefusesMalformedBodies(t *testing.T) {
	tests := []struct {
		name string
		body func(clientID string) string
		want string
	}{
		{"empty", func(string) string { return "" }, "not valid JSON"},
		{"not JSON", func(string) string { return "<html>hello</html>" }, "not valid JSON"},
		{"array", func(id string) string { return `[{"client_id":"` + id + `"}]` }, "not a JSON object"},
		{"string", func(string) string { return `"hello"` }, "not a JSON object"},
		{"null", func(string) string { return `null` }, "not a JSON object"},
		{"truncated", func(id string) string { return `{"client_id":"` + id + `"` }, "not valid JSON"},
		{"two objects", func(id string) string {
			return `{"client_id":"` + id + `","redirect_uris":["http://127.0.0.1/cb"]} {}`
		}, "data after its JSON object"},
		{"trailing garbage", func(id string) string {
			return `{"client_id":"` + id + `","redirect_uris":["http://127.0.0.1/cb"]} x`
		}, "data after its JSON object"},
		{"repeated field", func(id string) string {
			return `{"client_id":"` + id + `","redirect_uris":["http://127.0.0.1/cb"],"redirect_uris":["https://evil.example/cb"]}`
		}, "appears twice"},
		{"invalid UTF-8", func(id string) string {
			return `{"client_id":"` + id + `","client_name":"` + "\xff" + `","redirect_uris":["http://127.0.0.1/cb"]}`
		}, "not valid UTF-8"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var srv *testServer
			srv = newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(tc.body(srv.url(testHost, r.URL.Path))))
			}))
			e := newEnv(t, Options{AllowLoopbackForTests: true})
			_, err := e.f.Fetch(t.Context(), srv.url(testHost, "/client.json"))
			wantError(t, err, tc.want)
		})
	}
}

// TestFetchLogOmitsBody: the warning names the URL and the reason, and
// never repeats what the server sent.
func TestFetchLogOmitsBody(t *testing.T) {
	const marker = "SECRET-BODY-MARKER"
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"client_id": "https://elsewhere.example/` + marker + `", "redirect_uris": ["` + marker + `"]}`))
	}))
	e := newEnv(t, Options{AllowLoopbackForTests: true})
	clientID := srv.url(testHost, "/client.json")
	_, err := e.f.Fetch(t.Context(), clientID)
	wantError(t, err, "names a client_id other than the URL")
	logs := e.logs.String()
	if !strings.Contains(logs, clientID) || !strings.Contains(logs, "client_id other than") {
		t.Errorf("log lacks the URL or the reason:\n%s", logs)
	}
	if strings.Contains(logs, marker) {
		t.Errorf("log repeats the response body:\n%s", logs)
	}
}

func TestFetchTimeouts(t *testing.T) {
	t.Run("slow headers", func(t *testing.T) {
		srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}))
		e := newEnv(t, Options{AllowLoopbackForTests: true, Timeout: 300 * time.Millisecond})
		start := time.Now()
		_, err := e.f.Fetch(t.Context(), srv.url(testHost, "/client.json"))
		wantError(t, err, "did not answer in time")
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("gave up after %v, want about 300ms", d)
		}
	})
	t.Run("slow body", func(t *testing.T) {
		srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"client_id": `))
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}))
		e := newEnv(t, Options{AllowLoopbackForTests: true, Timeout: 300 * time.Millisecond})
		start := time.Now()
		_, err := e.f.Fetch(t.Context(), srv.url(testHost, "/client.json"))
		wantError(t, err, "did not answer in time")
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("gave up after %v, want about 300ms", d)
		}
	})
	t.Run("silent TLS peer", func(t *testing.T) {
		// Accepts TCP and never speaks: ConnectTimeout, not Timeout, ends it.
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var conns []net.Conn
		t.Cleanup(func() {
			_ = ln.Close()
			mu.Lock()
			defer mu.Unlock()
			for _, c := range conns {
				_ = c.Close()
			}
		})
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				mu.Lock()
				conns = append(conns, c)
				mu.Unlock()
			}
		}()
		_, port, _ := net.SplitHostPort(ln.Addr().String())
		e := newEnv(t, Options{AllowLoopbackForTests: true, ConnectTimeout: 200 * time.Millisecond, Timeout: 10 * time.Second})
		start := time.Now()
		_, err = e.f.Fetch(t.Context(), "https://"+testHost+":"+port+"/client.json")
		wantError(t, err, "TLS handshake in time")
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("gave up after %v, want about 200ms", d)
		}
	})
}

func TestFetchTLS(t *testing.T) {
	good := func(srv *testServer) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(mustJSON(t, validDoc("https://"+r.Host+r.URL.Path)))
		}
	}
	t.Run("certificate for another host", func(t *testing.T) {
		var srv *testServer
		srv = newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { good(srv)(w, r) }))
		e := newEnv(t, Options{AllowLoopbackForTests: true})
		_, err := e.f.Fetch(t.Context(), srv.url(wrongHost, "/client.json"))
		wantError(t, err, "certificate that is not valid")
		if srv.hits.Load() != 0 {
			t.Error("request sent over an unverified connection")
		}
	})
	t.Run("untrusted certificate", func(t *testing.T) {
		var srv *testServer
		srv = newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { good(srv)(w, r) }))
		e := newEnv(t, Options{AllowLoopbackForTests: true, RootCAs: x509.NewCertPool()})
		_, err := e.f.Fetch(t.Context(), srv.url(testHost, "/client.json"))
		wantError(t, err, "certificate that is not valid")
	})
	t.Run("plain HTTP server", func(t *testing.T) {
		plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
		t.Cleanup(plain.Close)
		_, port, _ := net.SplitHostPort(plain.Listener.Addr().String())
		e := newEnv(t, Options{AllowLoopbackForTests: true})
		_, err := e.f.Fetch(t.Context(), "https://"+testHost+":"+port+"/client.json")
		wantError(t, err, "did not complete a TLS handshake")
	})
}

// TestFetchDocumentRules runs each document rule through a real fetch.
func TestFetchDocumentRules(t *testing.T) {
	type doc = map[string]any
	set := func(k string, v any) func(doc, string) { return func(d doc, _ string) { d[k] = v } }
	del := func(k string) func(doc, string) { return func(d doc, _ string) { delete(d, k) } }
	redirects := func(uris ...string) func(doc, string) { return set("redirect_uris", uris) }
	var port string // of the server, known once it runs
	sameHost := func(path string) string { return "https://" + testHost + ":" + port + path }

	tests := []struct {
		name  string
		mod   func(d doc, clientID string)
		want  string                          // "" accepts
		check func(t *testing.T, d *Document) // for accepted documents
	}{
		{name: "minimal", mod: func(doc, string) {}, check: func(t *testing.T, d *Document) {
			if d.ClientName != "Example Agent" || d.TokenEndpointAuthMethod != "none" ||
				strings.Join(d.GrantTypes, " ") != "authorization_code" || strings.Join(d.ResponseTypes, " ") != "code" ||
				d.Host != testHost+":"+port || d.ClientURI != "" || d.LogoURI != "" || d.Scope != "" {
				t.Errorf("document %+v", d)
			}
		}},
		{name: "client_id with trailing slash", mod: func(d doc, id string) { d["client_id"] = id + "/" }, want: "names a client_id other than the URL"},
		{name: "client_id of another host", mod: func(d doc, id string) {
			d["client_id"] = strings.Replace(id, testHost, otherHost, 1)
		}, want: "names a client_id other than the URL"},
		{name: "client_id in other case", mod: func(d doc, id string) { d["client_id"] = strings.ToUpper(id) }, want: "names a client_id other than the URL"},
		{name: "client_id missing", mod: del("client_id"), want: "has no client_id"},
		{name: "client_id a number", mod: set("client_id", 7), want: "client_id that is not a string"},

		{name: "https redirect on the same host", mod: func(d doc, _ string) {
			d["redirect_uris"] = []string{sameHost("/cb"), "https://" + strings.ToUpper(testHost) + ":" + port + "/other?x=1"}
		}, check: func(t *testing.T, d *Document) {
			if len(d.RedirectURIs) != 2 {
				t.Errorf("redirect URIs %v", d.RedirectURIs)
			}
		}},
		{name: "loopback redirects", mod: redirects("http://127.0.0.1:3000/cb", "http://[::1]/cb", "http://localhost:8080/callback?x=1", "http://127.0.0.1/cb"),
			check: func(t *testing.T, d *Document) {
				if len(d.RedirectURIs) != 4 {
					t.Errorf("redirect URIs %v", d.RedirectURIs)
				}
			}},
		{name: "redirect on another host", mod: redirects("https://" + otherHost + "/cb"), want: "is on another host than the document"},
		{name: "redirect on another port", mod: redirects("https://" + testHost + ":1/cb"), want: "is on another host than the document"},
		{name: "redirect on the default port", mod: redirects("https://" + testHost + "/cb"), want: "is on another host than the document"},
		{name: "redirect on a subdomain", mod: func(d doc, _ string) {
			d["redirect_uris"] = []string{"https://evil." + testHost + ":" + port + "/cb"}
		}, want: "is on another host than the document"},
		{name: "http redirect on the document host", mod: func(d doc, _ string) {
			d["redirect_uris"] = []string{"http://" + testHost + ":" + port + "/cb"}
		}, want: "uses http on a host other than"},
		{name: "http redirect on a loopback-looking name", mod: redirects("http://127.0.0.1.evil.example/cb"), want: "uses http on a host other than"},
		{name: "http redirect on localhost subdomain", mod: redirects("http://localhost.evil.example/cb"), want: "uses http on a host other than"},
		{name: "custom scheme redirect", mod: redirects("com.example.app:/oauth/cb"), want: "not a valid absolute URL"},
		{name: "custom scheme redirect with host", mod: redirects("myapp://callback/x"), want: "neither https nor http"},
		{name: "javascript redirect", mod: redirects("javascript://127.0.0.1/%0aalert(1)"), want: "neither https nor http"},
		{name: "redirect with fragment", mod: func(d doc, _ string) { d["redirect_uris"] = []string{sameHost("/cb#x")} }, want: "contains a fragment"},
		{name: "redirect with user-info", mod: redirects("http://user@127.0.0.1/cb"), want: "user name or password"},
		{name: "empty redirect", mod: redirects(""), want: "is not a valid URL"},
		{name: "relative redirect", mod: redirects("/cb"), want: "not a valid absolute URL"},
		{name: "second redirect bad", mod: redirects("http://127.0.0.1/cb", "https://evil.example/cb"), want: "redirect URI (number 2)"},
		{name: "redirect_uris missing", mod: del("redirect_uris"), want: "has no redirect_uris"},
		{name: "redirect_uris empty", mod: redirects(), want: "has no redirect_uris"},
		{name: "redirect_uris a string", mod: set("redirect_uris", "http://127.0.0.1/cb"), want: "redirect_uris that is not an array of strings"},
		{name: "redirect_uris with a number", mod: set("redirect_uris", []any{"http://127.0.0.1/cb", 3}), want: "redirect_uris that is not an array of strings"},
		{name: "redirect_uris with null", mod: set("redirect_uris", []any{nil}), want: "redirect_uris that is not an array of strings"},
		{name: "10 redirect URIs", mod: func(d doc, _ string) {
			var uris []string
			for i := range 10 {
				uris = append(uris, fmt.Sprintf("http://127.0.0.1/cb%d", i))
			}
			d["redirect_uris"] = uris
		}, check: func(t *testing.T, d *Document) {
			if len(d.RedirectURIs) != 10 {
				t.Errorf("%d redirect URIs", len(d.RedirectURIs))
			}
		}},
		{name: "11 redirect URIs", mod: func(d doc, _ string) {
			var uris []string
			for i := range 11 {
				uris = append(uris, fmt.Sprintf("http://127.0.0.1/cb%d", i))
			}
			d["redirect_uris"] = uris
		}, want: "more than 10 redirect_uris"},

		{name: "https logo and client URIs", mod: func(d doc, _ string) {
			d["logo_uri"] = "https://cdn.example/logo.png"
			d["client_uri"] = "https://acme.example/"
		}, check: func(t *testing.T, d *Document) {
			if d.LogoURI != "https://cdn.example/logo.png" || d.ClientURI != "https://acme.example/" {
				t.Errorf("logo %q, client %q", d.LogoURI, d.ClientURI)
			}
		}},
		{name: "javascript logo_uri", mod: set("logo_uri", "javascript:alert(1)"), want: "logo_uri that is not an https URL"},
		{name: "data logo_uri", mod: set("logo_uri", "data:image/svg+xml;base64,PHN2Zz48L3N2Zz4="), want: "logo_uri that is not an https URL"},
		{name: "http logo_uri", mod: set("logo_uri", "http://cdn.example/logo.png"), want: "logo_uri that is not an https URL"},
		{name: "logo_uri with user-info", mod: set("logo_uri", "https://u:p@cdn.example/logo.png"), want: "logo_uri that is not an https URL"},
		{name: "javascript client_uri", mod: set("client_uri", "javascript:alert(1)"), want: "client_uri that is not an https URL"},
		{name: "logo_uri a number", mod: set("logo_uri", 1), want: "logo_uri that is not a string"},

		{name: "client_secret", mod: set("client_secret", "s3cret"), want: "contains a client secret"},
		{name: "empty client_secret", mod: set("client_secret", ""), want: "contains a client secret"},
		{name: "client_secret_expires_at", mod: set("client_secret_expires_at", 0), want: "contains a client secret"},
		{name: "null client_secret tolerated", mod: set("client_secret", nil)},
		{name: "jwks", mod: set("jwks", map[string]any{"keys": []any{}}), want: "publishes keys (jwks)"},
		{name: "jwks_uri", mod: set("jwks_uri", "https://acme.example/jwks.json"), want: "publishes keys (jwks_uri)"},

		{name: "auth method none", mod: set("token_endpoint_auth_method", "none")},
		{name: "auth method client_secret_post", mod: set("token_endpoint_auth_method", "client_secret_post"), want: "client authentication method client_secret_post"},
		{name: "auth method client_secret_basic", mod: set("token_endpoint_auth_method", "client_secret_basic"), want: "client authentication method client_secret_basic"},
		{name: "auth method private_key_jwt", mod: set("token_endpoint_auth_method", "private_key_jwt"), want: "client authentication method private_key_jwt"},
		{name: "auth method client_secret_jwt", mod: set("token_endpoint_auth_method", "client_secret_jwt"), want: "client authentication method client_secret_jwt"},
		{name: "auth method unknown", mod: set("token_endpoint_auth_method", "magic"), want: "token_endpoint_auth_method other than none"},
		{name: "auth methods supported none", mod: set("token_endpoint_auth_methods_supported", []string{"none"})},
		{name: "auth methods supported with none among others", mod: set("token_endpoint_auth_methods_supported", []string{"client_secret_basic", "none"})},
		{name: "auth methods supported without none", mod: set("token_endpoint_auth_methods_supported", []string{"client_secret_basic"}), want: "without none"},
		{name: "auth methods supported a string", mod: set("token_endpoint_auth_methods_supported", "none"), want: "not an array of strings"},

		{name: "grant types code and refresh", mod: set("grant_types", []string{"authorization_code", "refresh_token", "refresh_token"}),
			check: func(t *testing.T, d *Document) {
				if strings.Join(d.GrantTypes, " ") != "authorization_code refresh_token" {
					t.Errorf("grant types %v", d.GrantTypes)
				}
			}},
		{name: "grant type client_credentials", mod: set("grant_types", []string{"authorization_code", "client_credentials"}), want: "grant type other than"},
		{name: "grant type jwt-bearer", mod: set("grant_types", []string{"authorization_code", "urn:ietf:params:oauth:grant-type:jwt-bearer"}), want: "grant type other than"},
		{name: "grant type token-exchange", mod: set("grant_types", []string{"urn:ietf:params:oauth:grant-type:token-exchange"}), want: "grant type other than"},
		{name: "grant type implicit", mod: set("grant_types", []string{"implicit"}), want: "grant type other than"},
		{name: "grant types without authorization_code", mod: set("grant_types", []string{"refresh_token"}), want: "without authorization_code"},
		{name: "response type token", mod: set("response_types", []string{"token"}), want: "response type other than code"},
		{name: "response types code and id_token", mod: set("response_types", []string{"code", "id_token"}), want: "response type other than code"},
		{name: "response type code token", mod: set("response_types", []string{"code token"}), want: "response type other than code"},

		{name: "no client_name", mod: del("client_name"), check: func(t *testing.T, d *Document) {
			if d.ClientName != testHost+":"+port {
				t.Errorf("client name %q, want the host", d.ClientName)
			}
		}},
		{name: "blank client_name", mod: set("client_name", "   "), check: func(t *testing.T, d *Document) {
			if d.ClientName != testHost+":"+port {
				t.Errorf("client name %q, want the host", d.ClientName)
			}
		}},
		{name: "200-rune client_name", mod: set("client_name", strings.Repeat("é", 200))},
		{name: "201-rune client_name", mod: set("client_name", strings.Repeat("é", 201)), want: "client_name longer than 200 characters"},
		{name: "client_name with newline", mod: set("client_name", "Acme\nPay here"), want: "client_name with control characters"},
		{name: "client_name with bidi override", mod: set("client_name", "Acme \u202egnp.exe"), want: "client_name with control characters"},
		{name: "scope", mod: set("scope", " openid  profile courses:read "), check: func(t *testing.T, d *Document) {
			if d.Scope != "openid profile courses:read" {
				t.Errorf("scope %q", d.Scope)
			}
		}},
		{name: "scope with a newline", mod: set("scope", "openid\nprofile"), want: "scope with characters"},
		{name: "scope an array", mod: set("scope", []string{"openid"}), want: "scope that is not a string"},
		{name: "unknown fields", mod: func(d doc, _ string) {
			d["x-vendor"] = map[string]any{"nested": []any{1, "two", nil}}
			d["software_statement"] = "eyJ..."
			d["contacts"] = []string{"a@example.com"}
		}},
	}

	bodies := map[string][]byte{}
	var mu sync.Mutex
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		b := bodies[r.URL.Path]
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b)
	}))
	port = srv.port
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := fmt.Sprintf("/clients/%d.json", i)
			clientID := srv.url(testHost, path)
			d := validDoc(clientID)
			tc.mod(d, clientID)
			mu.Lock()
			bodies[path] = mustJSON(t, d)
			mu.Unlock()

			e := newEnv(t, Options{AllowLoopbackForTests: true})
			got, err := e.f.Fetch(t.Context(), clientID)
			if tc.want != "" {
				wantError(t, err, tc.want)
				if got != nil {
					t.Error("a document returned with an error")
				}
				if e.cache.setCount() != 0 {
					t.Error("an invalid document was cached")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.ClientID != clientID {
				t.Errorf("ClientID %q", got.ClientID)
			}
			if tc.check != nil {
				tc.check(t, got)
			}
			if e.cache.setCount() != 1 {
				t.Error("a valid document was not cached")
			}
		})
	}
}
