package authserver

import (
	"net/url"
	"strings"
	"testing"
)

// error_description stays within RFC 6749 §4.1.2.1's characters whatever
// the request quoted into it.
func TestDescriptionText(t *testing.T) {
	for in, want := range map[string]string{
		"code_challenge_method \"S256\x00\" is not supported": "code_challenge_method 'S256?' is not supported",
		"a\r\nLocation: https://evil.test":                    "a??Location: https://evil.test",
		`back\slash and caf` + "\u00e9":                       "back/slash and caf??",
		"plain text stays":                                    "plain text stays",
	} {
		if got := descriptionText(in); got != want {
			t.Errorf("descriptionText(%q) = %q; want %q", in, got, want)
		}
	}
	if got := descriptionText(strings.Repeat("x", 1000)); len(got) != 300 || !strings.HasSuffix(got, "...") {
		t.Errorf("a long description: %d bytes", len(got))
	}
}

// The answer to the client carries every non-empty parameter, escaped, on
// the redirect URI as registered, its own query kept (RFC 6749 §4.1.2);
// the URI without a query, which skips parsing, reads back the same.
func TestResponseURL(t *testing.T) {
	params := func() url.Values {
		return url.Values{"code": {"c0de-_.~"}, "state": {"a b&c=d/\u00e9?#"}, "iss": {"https://academy.example"}, "error": {""}}
	}
	for _, c := range []struct{ uri, want string }{
		{"https://client.example/cb", "https://client.example/cb?code=c0de-_.~&iss=https%3A%2F%2Facademy.example&state=a+b%26c%3Dd%2F%C3%A9%3F%23"},
		{"http://127.0.0.1:9999/cb", "http://127.0.0.1:9999/cb?code=c0de-_.~&iss=https%3A%2F%2Facademy.example&state=a+b%26c%3Dd%2F%C3%A9%3F%23"},
		{"http://[::1]:8080/oauth2/callback", "http://[::1]:8080/oauth2/callback?code=c0de-_.~&iss=https%3A%2F%2Facademy.example&state=a+b%26c%3Dd%2F%C3%A9%3F%23"},
		{"https://client.example/cb?tenant=7&state=old", "https://client.example/cb?code=c0de-_.~&iss=https%3A%2F%2Facademy.example&state=a+b%26c%3Dd%2F%C3%A9%3F%23&tenant=7"},
	} {
		p := params()
		got := responseURL(c.uri, p)
		if len(p) != 4 {
			t.Errorf("responseURL(%q) changed the caller's parameters: %v", c.uri, p)
		}
		if got != c.want {
			t.Errorf("responseURL(%q) =\n %s\nwant\n %s", c.uri, got, c.want)
		}
		u, err := url.Parse(got)
		if err != nil || u.Query().Get("state") != "a b&c=d/\u00e9?#" || u.Query().Has("error") {
			t.Errorf("%s reads back as %v (%v)", got, u, err)
		}
	}
	if got := responseURL("https://client.example/cb", url.Values{"state": {""}}); got != "https://client.example/cb" {
		t.Errorf("no parameters: %s", got)
	}
}
