package adminapi

import (
	"strings"
	"testing"
)

func TestCleanName(t *testing.T) {
	for in, want := range map[string]string{
		"logo.png":               "logo.png",
		"../../etc/passwd":       "passwd",
		`C:\Users\x\logo.png`:    "logo.png",
		"evil\u202egnp.exe":      "evilgnp.exe",
		"a\"b\x00c.png":          "abc.png",
		"":                       "upload",
		strings.Repeat("é", 300): strings.Repeat("é", 200),
	} {
		if got := cleanName(in); got != want {
			t.Errorf("cleanName(%q) = %q; want %q", in, got, want)
		}
	}
}
