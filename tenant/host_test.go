package tenant

import (
	"errors"
	"strings"
	"testing"
)

func TestCanonicalHost(t *testing.T) {
	tests := []struct {
		name, in, scheme, want string
		wantErr                bool
	}{
		{name: "plain", in: "academy.example.com", scheme: "https", want: "academy.example.com"},
		{name: "upper case folded", in: "Academy.Example.COM", scheme: "https", want: "academy.example.com"},
		{name: "port kept", in: "localhost:8080", scheme: "http", want: "localhost:8080"},
		{name: "https default port dropped", in: "a.test:443", scheme: "https", want: "a.test"},
		{name: "http default port dropped", in: "a.test:80", scheme: "http", want: "a.test"},
		{name: "443 kept on http", in: "a.test:443", scheme: "http", want: "a.test:443"},
		{name: "ipv4", in: "127.0.0.1:8080", scheme: "http", want: "127.0.0.1:8080"},
		{name: "ipv6", in: "[::1]:8080", scheme: "http", want: "[::1]:8080"},
		{name: "ipv6 no port", in: "[::1]", scheme: "http", want: "[::1]"},
		{name: "trailing dot kept (matches no site)", in: "a.test.", scheme: "https", want: "a.test."},
		{name: "empty", in: "", wantErr: true},
		{name: "user info", in: "user@a.test", wantErr: true},
		{name: "user info with port", in: "u:p@a.test:80", wantErr: true},
		{name: "unicode", in: "académie.test", wantErr: true},
		{name: "over 255 bytes", in: strings.Repeat("a.", 128) + "test", wantErr: true},
		{name: "port zero", in: "a.test:0", wantErr: true},
		{name: "port too large", in: "a.test:65536", wantErr: true},
		{name: "port not numeric", in: "a.test:http", wantErr: true},
		{name: "port with sign", in: "a.test:+80", wantErr: true},
		{name: "port leading zero", in: "a.test:080", wantErr: true},
		{name: "empty port", in: "a.test:", wantErr: true},
		{name: "empty label", in: "a..test", wantErr: true},
		{name: "leading hyphen", in: "-a.test", wantErr: true},
		{name: "space", in: "a test", wantErr: true},
		{name: "slash", in: "a.test/x", wantErr: true},
		{name: "unclosed ipv6", in: "[::1", wantErr: true},
		{name: "ipv6 junk after bracket", in: "[::1]x", wantErr: true},
		{name: "ipv6 bad chars", in: "[zz::1]", wantErr: true},
		{name: "only dot", in: ".", wantErr: true},
		{name: "label over 63", in: strings.Repeat("a", 64) + ".test", wantErr: true},
		{name: "percent", in: "a%2e.test", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := CanonicalHost(tt.in, tt.scheme)
			if tt.wantErr {
				if !errors.Is(err, ErrInvalidHost) {
					t.Fatalf("CanonicalHost(%q) = %q, %v; want ErrInvalidHost", tt.in, got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("CanonicalHost(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestCanonicalOrigin(t *testing.T) {
	tests := []struct {
		in, want string
		wantErr  bool
	}{
		{in: "https://Academy.Example.com", want: "https://academy.example.com"},
		{in: "https://academy.example.com/", want: "https://academy.example.com"},
		{in: "https://academy.example.com:443", want: "https://academy.example.com"},
		{in: "HTTP://localhost:8080", want: "http://localhost:8080"},
		{in: "http://127.0.0.1:8080/", want: "http://127.0.0.1:8080"},
		{in: "https://a.test/path", wantErr: true},
		{in: "https://a.test?x=1", wantErr: true},
		{in: "https://a.test/?", wantErr: true},
		{in: "https://a.test#frag", wantErr: true},
		{in: "https://a.test/#", wantErr: true},
		{in: "ftp://a.test", wantErr: true},
		{in: "https://user@a.test", wantErr: true},
		{in: "a.test", wantErr: true},
		{in: "https://", wantErr: true},
		{in: "https://a.test//", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := CanonicalOrigin(tt.in)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("CanonicalOrigin(%q) = %q; want an error", tt.in, got)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("CanonicalOrigin(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}

// FuzzCanonicalHost: parsing untrusted Host headers never panics, and what
// it accepts is stable, lower-case and free of user-info.
func FuzzCanonicalHost(f *testing.F) {
	for _, s := range []string{"localhost:8080", "[::1]:80", "a.test.", "user@host", "Ünï.test", "a:99999", ""} {
		f.Add(s, "http")
	}
	f.Fuzz(func(t *testing.T, in, scheme string) {
		got, err := CanonicalHost(in, scheme)
		if err != nil {
			return
		}
		if got != strings.ToLower(got) || strings.ContainsAny(got, "@/ \t") || len(got) > maxHostLen {
			t.Fatalf("CanonicalHost(%q) = %q: not canonical", in, got)
		}
		again, err := CanonicalHost(got, scheme)
		if err != nil || again != got {
			t.Fatalf("not idempotent: %q → %q → %q, %v", in, got, again, err)
		}
	})
}
