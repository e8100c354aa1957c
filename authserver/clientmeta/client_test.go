package clientmeta

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/lectern/lectern/authserver/scope"
)

// TestValidateClient covers the uses of the redirect rules through
// ValidateClient (open registration is LoopbackOnly; operators' clients are
// not) and the other metadata it checks.
func TestValidateClient(t *testing.T) {
	loop := []string{"http://127.0.0.1:33418/callback"}
	tests := []struct {
		name  string
		spec  ClientSpec
		code  ErrorCode // "" accepts
		field string
		want  func(t *testing.T, c *Client)
	}{
		{name: "open registration, loopback", spec: ClientSpec{Name: " CLI ", RedirectURIs: loop, LoopbackOnly: true},
			want: func(t *testing.T, c *Client) {
				if c.Name != "CLI" || c.Audience != scope.AudienceMember || c.ApplicationType != "native" || !slices.Equal(c.Scopes, scope.MemberDefault()) {
					t.Errorf("client %+v", c)
				}
			}},
		{name: "open registration, https", spec: ClientSpec{Name: "Web", RedirectURIs: []string{"https://app.example/cb"}, LoopbackOnly: true},
			code: InvalidRedirectURI, field: "redirect_uris"},
		{name: "open registration, port 0", spec: ClientSpec{Name: "CLI", RedirectURIs: []string{"http://127.0.0.1:0/cb"}, LoopbackOnly: true},
			code: InvalidRedirectURI, field: "redirect_uris"},
		{name: "open registration, empty port", spec: ClientSpec{Name: "CLI", RedirectURIs: []string{"http://[::1]:/cb"}, LoopbackOnly: true},
			code: InvalidRedirectURI, field: "redirect_uris"},
		{name: "open registration, web application", spec: ClientSpec{Name: "CLI", RedirectURIs: loop, LoopbackOnly: true, ApplicationType: "web"},
			code: InvalidClientMetadata, field: "application_type"},
		{name: "operators, https", spec: ClientSpec{Name: "Portal", RedirectURIs: []string{"https://portal.example/cb"}, Audience: scope.AudienceMember, Confidential: true},
			want: func(t *testing.T, c *Client) {
				if c.ApplicationType != "web" || !c.Confidential || c.Audience != scope.AudienceMember {
					t.Errorf("client %+v", c)
				}
			}},
		{name: "operators, loopback", spec: ClientSpec{Name: "App", RedirectURIs: loop},
			want: func(t *testing.T, c *Client) {
				if c.ApplicationType != "native" {
					t.Errorf("client %+v", c)
				}
			}},
		{name: "operators, plain http", spec: ClientSpec{Name: "x", RedirectURIs: []string{"http://evil.example/cb"}},
			code: InvalidRedirectURI, field: "redirect_uris"},
		{name: "operators, port 0", spec: ClientSpec{Name: "x", RedirectURIs: []string{"https://app.example:0/cb"}},
			code: InvalidRedirectURI, field: "redirect_uris"},
		{name: "the second URI bad", spec: ClientSpec{Name: "x", RedirectURIs: []string{"https://app.example/cb", "app://cb"}},
			code: InvalidRedirectURI, field: "redirect_uris"},
		{name: "no redirect URI", spec: ClientSpec{Name: "x"}, code: InvalidRedirectURI, field: "redirect_uris"},
		{name: "11 redirect URIs", spec: ClientSpec{Name: "x", RedirectURIs: slices.Repeat(loop, 11)}, code: InvalidRedirectURI, field: "redirect_uris"},
		{name: "no name", spec: ClientSpec{Name: "  ", RedirectURIs: loop}, code: InvalidClientMetadata, field: "client_name"},
		{name: "200-character name", spec: ClientSpec{Name: strings.Repeat("é", 200), RedirectURIs: loop}},
		{name: "201-character name", spec: ClientSpec{Name: strings.Repeat("é", 201), RedirectURIs: loop}, code: InvalidClientMetadata, field: "client_name"},
		{name: "bidi in the name", spec: ClientSpec{Name: "Safe\u202eevil", RedirectURIs: loop}, code: InvalidClientMetadata, field: "client_name"},
		{name: "control character in the name", spec: ClientSpec{Name: "a\x07b", RedirectURIs: loop}, code: InvalidClientMetadata, field: "client_name"},
		{name: "invalid UTF-8 in the name", spec: ClientSpec{Name: "a\xffb", RedirectURIs: loop}, code: InvalidClientMetadata, field: "client_name"},
		{name: "operator scopes", spec: ClientSpec{Name: "x", RedirectURIs: loop, Scopes: []string{"openid", "courses:read", "courses:read"}},
			want: func(t *testing.T, c *Client) {
				if c.Audience != scope.AudienceOperator || !slices.Equal(c.Scopes, []string{"openid", "courses:read"}) {
					t.Errorf("client %+v", c)
				}
			}},
		{name: "operator and account scopes", spec: ClientSpec{Name: "x", RedirectURIs: loop, Scopes: []string{"courses:read", "account:read"}},
			code: InvalidClientMetadata, field: "scope"},
		{name: "unknown scope", spec: ClientSpec{Name: "x", RedirectURIs: loop, Scopes: []string{"admin:everything"}}, code: InvalidClientMetadata, field: "scope"},
		{name: "member application with an operator scope", spec: ClientSpec{Name: "x", RedirectURIs: loop, Scopes: []string{"students:read"}, Audience: scope.AudienceMember},
			code: InvalidClientMetadata, field: "scope"},
		{name: "unknown application type", spec: ClientSpec{Name: "x", RedirectURIs: loop, ApplicationType: "desktop"}, code: InvalidClientMetadata, field: "application_type"},
		{name: "confidential resource server", spec: ClientSpec{Name: "x", RedirectURIs: loop, Confidential: true, ResourceServer: true}},
		{name: "public resource server", spec: ClientSpec{Name: "x", RedirectURIs: loop, ResourceServer: true}, code: InvalidClientMetadata, field: "resource_server"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ValidateClient(tc.spec)
			if tc.code == "" {
				if err != nil {
					t.Fatalf("ValidateClient: %v", err)
				}
				if tc.want != nil {
					tc.want(t, c)
				}
				return
			}
			var me *MetadataError
			if !errors.As(err, &me) || me.Code != tc.code || me.Field != tc.field || !strings.HasPrefix(me.Description, tc.field+": ") {
				t.Fatalf("ValidateClient = %v, want %s on %s", err, tc.code, tc.field)
			}
			if !utf8.ValidString(me.Description) {
				t.Errorf("description %q", me.Description)
			}
		})
	}
}

// The returned client does not share the spec's slice.
func TestValidateClientCopies(t *testing.T) {
	uris := []string{"http://127.0.0.1/cb"}
	c, err := ValidateClient(ClientSpec{Name: "x", RedirectURIs: uris})
	if err != nil {
		t.Fatal(err)
	}
	uris[0] = "http://127.0.0.1/changed"
	if c.RedirectURIs[0] != "http://127.0.0.1/cb" {
		t.Fatalf("redirect URIs %v", c.RedirectURIs)
	}
}

func TestMatchVendorName(t *testing.T) {
	names := []string{"Claude", " Acme Agent "}
	tests := []struct {
		name, clientName string
		want             bool
	}{
		{"exact", "Claude", true},
		{"ASCII case and spaces", "  cLAUDE ", true},
		{"an alias, trimmed", "acme agent", true},
		{"another name", "Claud", false},
		{"empty", " ", false},
		{"long s (Unicode folding)", "Acme Agent\u017f", false},
		{"Kelvin sign", "\u212aLAUDE", false},
		{"zero-width space", "Clau\u200bde", false},
		{"byte-order mark", "\ufeffClaude", false},
		{"bidi override", "Claude\u202e", false},
		{"control character", "Claude\x00", false},
		{"Cyrillic a", "Cl\u0430ude", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := MatchVendorName(tc.clientName, names); got != tc.want {
				t.Fatalf("MatchVendorName(%q) = %v, want %v", tc.clientName, got, tc.want)
			}
		})
	}
}

func TestIsHTTPSURL(t *testing.T) {
	tests := []struct {
		name, in string
		want     bool
	}{
		{"https", "https://acme.example/", true},
		{"with a path and query", "https://cdn.example/logo.png?v=2", true},
		{"http", "http://acme.example/", false},
		{"upper-case scheme", "HTTPS://acme.example/", false},
		{"javascript", "javascript:alert(1)", false},
		{"data", "data:image/png;base64,AAAA", false},
		{"no host", "https:///x", false},
		{"user information", "https://u@acme.example/", false},
		{"port 0", "https://acme.example:0/", false},
		{"non-ASCII", "https://acmé.example/", false},
		{"space", "https://acme.example/a b", false},
		{"bad escape", "https://acme.example/%zz", false},
		{"too long", "https://acme.example/" + strings.Repeat("a", MaxURLLen), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := IsHTTPSURL(tc.in); got != tc.want {
				t.Fatalf("IsHTTPSURL(%q) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}

func TestTruncate(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"abcdef", 3, "abc…"},
		{"aé", 2, "a…"}, // never half of é
	} {
		if got := Truncate(tc.in, tc.n); got != tc.want {
			t.Errorf("Truncate(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}
