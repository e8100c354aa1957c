package cimd

import (
	"errors"
	"strings"
	"testing"
)

func TestValidateClientIDURL(t *testing.T) {
	long := "https://client.example/" + strings.Repeat("a", MaxClientIDLength-len("https://client.example/"))
	tests := []struct {
		name string
		in   string
		want string // "" accepts; else part of the Description
	}{
		{"plain", "https://client.example/oauth/client.json", ""},
		{"default port", "https://client.example:443/client.json", ""},
		{"other port", "https://client.example:8443/client.json", ""},
		{"trailing slash path", "https://client.example/app/", ""},
		{"IPv4 literal (the dialer vets it)", "https://169.254.169.254/latest/meta-data", ""},
		{"IPv6 literal", "https://[2001:db8::1]/client.json", ""},
		{"percent-encoded path", "https://client.example/a%20b.json", ""},
		{"exactly 2048 bytes", long, ""},

		{"http", "http://client.example/client.json", "must start with https://"},
		{"upper-case scheme", "HTTPS://client.example/client.json", "must start with https://"},
		{"no path", "https://client.example", "must have a path"},
		{"root path", "https://client.example/", "must have a path"},
		{"query", "https://client.example/client.json?v=1", "must not contain a query"},
		{"empty query", "https://client.example/client.json?", "must not contain a query"},
		{"fragment", "https://client.example/client.json#x", "must not contain a fragment"},
		{"empty fragment", "https://client.example/client.json#", "must not contain a fragment"},
		{"user-info", "https://user:pass@client.example/client.json", "user name or password"},
		{"user only", "https://user@client.example/client.json", "user name or password"},
		{"dot segment", "https://client.example/./client.json", ". or .. path segments"},
		{"dot-dot segment", "https://client.example/a/../client.json", ". or .. path segments"},
		{"trailing dot-dot", "https://client.example/a/..", ". or .. path segments"},
		{"encoded dot-dot", "https://client.example/a/%2e%2E/client.json", ". or .. path segments"},
		{"too long", long + "a", "longer than 2048 bytes"},
		{"empty", "", "must start with https://"},
		{"garbage", "not a url", "must start with https://"},
		{"space", "https://client.example/a b", "not allowed in a URL"},
		{"backslash", "https://client.example\\@evil.example/x", "not allowed in a URL"},
		{"non-ASCII", "https://client.example/é", "not allowed in a URL"},
		{"control character", "https://client.example/a\x00", "not allowed in a URL"},
		{"no host", "https:///client.json", "has no host"},
		{"empty port", "https://client.example:/client.json", "empty port"},
		{"port zero", "https://client.example:0/client.json", "invalid port"},
		{"port too large", "https://client.example:65536/client.json", "invalid port"},
		{"bad port", "https://client.example:https/client.json", "not a valid URL"},
		{"IPv6 zone", "https://[fe80::1%25eth0]/client.json", "invalid IPv6"},
		{"bracketed IPv4", "https://[127.0.0.1]/client.json", "not a valid URL"},
		{"trailing dot", "https://client.example./client.json", "invalid host name"},
		{"empty label", "https://client..example/client.json", "invalid host name"},
		{"decimal IP", "https://2130706433/client.json", "invalid host name"},
		{"hex IP", "https://0x7f.1/client.json", "invalid host name"},
		{"octal-looking IP", "https://0177.0.0.1/client.json", "invalid host name"},
		{"bad percent escape", "https://client.example/%zz", "not a valid URL"},
		{"percent in host", "https://client%2eexample/x", "not a valid URL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u, err := ValidateClientIDURL(tc.in)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("ValidateClientIDURL(%q) = %v, want ok", tc.in, err)
				}
				if u.Scheme != "https" || u.Host == "" {
					t.Fatalf("ValidateClientIDURL(%q) = %#v", tc.in, u)
				}
				return
			}
			if u != nil {
				t.Errorf("ValidateClientIDURL(%q) returned a URL with its error", tc.in)
			}
			wantError(t, err, tc.want)
		})
	}
}

func TestValidateClientIDURLErrorIsValue(t *testing.T) {
	_, err1 := ValidateClientIDURL("http://a.example/x")
	_, err2 := ValidateClientIDURL("http://a.example/x")
	var e1, e2 *Error
	if !errors.As(err1, &e1) || !errors.As(err2, &e2) || e1 == e2 {
		t.Fatal("errors must be fresh *Error values")
	}
}

func TestIsClientIDURL(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"https://client.example/client.json", true},
		{"https://client.example/", false},
		{"https://client.example", false},
		{"http://client.example/client.json", false},
		{"HTTPS://client.example/client.json", false},
		{"my-client-id", false},
		{"", false},
		{"https://client.example/%zz", false}, // does not parse
		// Meant as a CIMD URL, though invalid: the caller reports the CIMD
		// error rather than "unknown client".
		{"https://client.example/client.json?x=1", true},
		{"https://user@client.example/a/../b", true},
	}
	for _, tc := range tests {
		if got := IsClientIDURL(tc.in); got != tc.want {
			t.Errorf("IsClientIDURL(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestCanonicalHost(t *testing.T) {
	tests := map[string]string{
		"https://Client.Example/x":         "client.example",
		"https://client.example:443/x":     "client.example",
		"https://client.example:8443/x":    "client.example:8443",
		"https://[2001:DB8::1]/x":          "[2001:db8::1]",
		"https://[2001:db8::1]:8443/x":     "[2001:db8::1]:8443",
		"https://93.184.216.34:443/a.json": "93.184.216.34",
	}
	for in, want := range tests {
		u, err := ValidateClientIDURL(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := Host(u); got != want {
			t.Errorf("Host(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzValidateClientIDURL(f *testing.F) {
	for _, s := range []string{
		"https://client.example/client.json",
		"https://client.example:443/a/b",
		"https://[::1]/x",
		"https://a/./b",
		"https://u@h/p?q#f",
		"https://h/%2e%2e",
		"https://0x7f.1/x",
		"http://h/p",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		isURL := IsClientIDURL(s)
		u, err := ValidateClientIDURL(s)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Description == "" {
				t.Fatalf("error %v is not an *Error with a description", err)
			}
			if u != nil {
				t.Fatal("a URL returned with an error")
			}
			return
		}
		if !strings.HasPrefix(s, "https://") || u.Scheme != "https" {
			t.Fatalf("accepted %q: not https", s)
		}
		if u.Path == "" || u.Path == "/" {
			t.Fatalf("accepted %q: root path", s)
		}
		if u.Host == "" || u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" ||
			strings.ContainsAny(s, "?#") || len(s) > MaxClientIDLength {
			t.Fatalf("accepted %q: %#v", s, u)
		}
		for seg := range strings.SplitSeq(u.Path, "/") {
			if seg == "." || seg == ".." {
				t.Fatalf("accepted %q: dot segment", s)
			}
		}
		if !isURL {
			t.Fatalf("accepted %q, which IsClientIDURL does not recognise", s)
		}
		if h := Host(u); h == "" || h != strings.ToLower(h) {
			t.Fatalf("accepted %q: canonical host %q", s, h)
		}
	})
}
