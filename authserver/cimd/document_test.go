package cimd

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lectern/lectern/authserver/clientmeta"
)

func TestCheckRedirectURIDefaultPort(t *testing.T) {
	// Host compares host[:port] case-insensitively, with https' default port
	// the same as none.
	tests := []struct {
		uri, docHost string
		ok           bool
	}{
		{"https://client.example/cb", "client.example", true},
		{"https://client.example:443/cb", "client.example", true},
		{"https://CLIENT.Example/cb", "client.example", true},
		{"https://client.example:8443/cb", "client.example", false},
		{"https://client.example/cb", "client.example:8443", false},
		{"https://client.example:8443/cb", "client.example:8443", true},
		{"https://[2001:db8::1]/cb", "[2001:db8::1]", true},
		{"http://[::1]:9/cb", "client.example", true},
		{"http://LOCALHOST/cb", "client.example", false},
		{"http://127.0.0.2/cb", "client.example", false},
		{"http://[::ffff:127.0.0.1]/cb", "client.example", false},
		{"https://client.example:0/cb", "client.example", false},
		{"https://client.example:/cb", "client.example", false},
	}
	for _, tc := range tests {
		if got := checkRedirectURI(tc.uri, tc.docHost); (got == "") != tc.ok {
			t.Errorf("checkRedirectURI(%q, %q) = %q, want ok %v", tc.uri, tc.docHost, got, tc.ok)
		}
	}
}

func TestParseDocumentDefaultPortHost(t *testing.T) {
	const id = "https://Client.Example:443/c.json"
	u, err := ValidateClientIDURL(id)
	if err != nil {
		t.Fatal(err)
	}
	d, err := parseDocument(id, u, []byte(`{"client_id":"`+id+`","redirect_uris":["https://client.example/cb"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if d.Host != "client.example" || d.ClientName != "client.example" {
		t.Errorf("Host %q, ClientName %q, want client.example", d.Host, d.ClientName)
	}
}

func TestCacheTTL(t *testing.T) {
	tests := []struct {
		headers []string // name, value, ...
		want    time.Duration
	}{
		{nil, 5 * time.Minute},
		{[]string{"Cache-Control", "max-age=0"}, 5 * time.Minute},
		{[]string{"Cache-Control", "max-age=299"}, 5 * time.Minute},
		{[]string{"Cache-Control", "max-age=301"}, 301 * time.Second},
		{[]string{"Cache-Control", "max-age=86400"}, 24 * time.Hour},
		{[]string{"Cache-Control", "max-age=86401"}, 24 * time.Hour},
		{[]string{"Cache-Control", "max-age=99999999999999999999999"}, 24 * time.Hour},
		{[]string{"Cache-Control", `max-age="600"`}, 10 * time.Minute},
		{[]string{"Cache-Control", "MAX-AGE = 600"}, 10 * time.Minute}, // stray spaces tolerated
		{[]string{"Cache-Control", "Max-Age=600"}, 10 * time.Minute},
		{[]string{"Cache-Control", "max-age=-5"}, 5 * time.Minute},
		{[]string{"Cache-Control", "max-age=abc"}, 5 * time.Minute},
		{[]string{"Cache-Control", "private, max-age=600"}, 10 * time.Minute},
		{[]string{"Cache-Control", "public", "Cache-Control", "max-age=7200"}, 2 * time.Hour},
		{[]string{"Cache-Control", "max-age=600", "Cache-Control", "no-store"}, 5 * time.Minute},
		{[]string{"Cache-Control", "no-cache"}, 5 * time.Minute},
		{[]string{"Cache-Control", "max-age=3600", "Age", "3500"}, 5 * time.Minute},
		{[]string{"Cache-Control", "max-age=3600", "Age", "junk"}, time.Hour},
		{[]string{"Expires", "Thu, 01 Dec 2094 16:00:00 GMT"}, 5 * time.Minute},
	}
	for _, tc := range tests {
		h := http.Header{}
		for i := 0; i < len(tc.headers); i += 2 {
			h.Add(tc.headers[i], tc.headers[i+1])
		}
		if got := cacheTTL(h); got != tc.want {
			t.Errorf("cacheTTL(%v) = %v, want %v", tc.headers, got, tc.want)
		}
	}
}

func TestErrorText(t *testing.T) {
	e := newError(io.ErrUnexpectedEOF, "The client metadata document could not be read completely.")
	if got, want := e.Error(), "cimd: The client metadata document could not be read completely: unexpected EOF"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(e, io.ErrUnexpectedEOF) {
		t.Error("the cause is not in the chain")
	}
	if got := newError(nil, "Bad.").Error(); got != "cimd: Bad." {
		t.Errorf("Error() = %q", got)
	}
}

func FuzzParseDocument(f *testing.F) {
	const id = "https://client.example/client.json"
	for _, s := range []string{
		`{"client_id":"` + id + `","redirect_uris":["https://client.example/cb"]}`,
		`{"client_id":"` + id + `","redirect_uris":["http://127.0.0.1:8080/cb"],"grant_types":["authorization_code","refresh_token"],"client_name":"x","logo_uri":"https://a.example/l.png","scope":"openid"}`,
		`{"client_id":"` + id + `","redirect_uris":["https://client.example:443/cb"],"token_endpoint_auth_methods_supported":["none"]}`,
		`{"client_id":"` + id + `","redirect_uris":null,"client_secret":null}`,
		`[]`, `null`, `{}`, `{"a":1,"a":2}`, `{"client_id":"` + id + `"} {}`,
	} {
		f.Add([]byte(s))
	}
	u, err := ValidateClientIDURL(id)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		d, err := parseDocument(id, u, raw)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || !strings.HasPrefix(e.Description, "The client metadata document ") {
				t.Fatalf("error %v is not a described *Error", err)
			}
			return
		}
		if d.ClientID != id || d.Host != "client.example" || d.TokenEndpointAuthMethod != "none" {
			t.Fatalf("accepted %+v", d)
		}
		if n := len(d.RedirectURIs); n == 0 || n > MaxRedirectURIs {
			t.Fatalf("accepted %d redirect URIs", n)
		}
		for _, r := range d.RedirectURIs {
			if msg := checkRedirectURI(r, d.Host); msg != "" {
				t.Fatalf("accepted redirect URI %q: %s", r, msg)
			}
			if !strings.HasPrefix(r, "https://") && !strings.HasPrefix(r, "http://") {
				t.Fatalf("accepted redirect URI %q", r)
			}
		}
		for _, g := range d.GrantTypes {
			if g != "authorization_code" && g != "refresh_token" {
				t.Fatalf("accepted grant type %q", g)
			}
		}
		if len(d.ResponseTypes) != 1 || d.ResponseTypes[0] != "code" {
			t.Fatalf("accepted response types %v", d.ResponseTypes)
		}
		for _, s := range []string{d.LogoURI, d.ClientURI} {
			if s != "" && !strings.HasPrefix(s, "https://") {
				t.Fatalf("accepted URI %q", s)
			}
		}
		if d.ClientName == "" || strings.IndexFunc(d.ClientName, clientmeta.UnsafeNameRune) >= 0 {
			t.Fatalf("accepted client name %q", d.ClientName)
		}
	})
}
