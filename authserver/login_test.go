package authserver

import "testing"

// Return targets after sign-in and sign-out stay on this origin, also for
// the forms browsers read leniently (WHATWG URL: tabs and newlines dropped,
// backslash as slash).
func TestLocalPath(t *testing.T) {
	for _, ok := range []string{"/", "/admin", "/admin/settings?tab=beta#top", "/account/connections?page=2", "/a%2Fb"} {
		if got := localPath(ok); got != ok {
			t.Errorf("localPath(%q) = %q; want it kept", ok, got)
		}
	}
	for _, bad := range []string{
		"", "admin", "//evil.test", "///evil.test", "/\\evil.test", "\\\\evil.test",
		"/\t/evil.test", "/\t\\evil.test", "/\n/evil.test", "/\r\n/evil.test", "\t//evil.test", " /evil",
		"/%2f%2fevil.test", "https://evil.test/", "http:/evil.test", "javascript:alert(1)",
		"/ok\x00", "/ok\x7f", "/a b", "/" + string(make([]byte, 3000)),
	} {
		if got := localPath(bad); got != "" {
			t.Errorf("localPath(%q) = %q; want it refused", bad, got)
		}
	}
}
