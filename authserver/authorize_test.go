package authserver

import (
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
