package clientmeta

import (
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

// The three registration policies of DESIGN §6.
var (
	openRegistration = Policy{LoopbackOnly: true}             // Variant B, RFC 7591
	operators        = Policy{}                               // admin area, admin API, CLI, vendors
	document         = Policy{DocumentHost: "client.example"} // a CIMD document at https://client.example/...
)

// TestRedirectURIForms is every redirect URI form we accept or refuse, for
// each way a client gets its redirect URIs: open registration (loopback
// only), a client the operators create (https or loopback), and a Client ID
// Metadata Document on client.example (https under the document's host or
// loopback). why is part of the refusal's Phrase under the operators'
// policy (the widest), or the document's for what only it refuses.
func TestRedirectURIForms(t *testing.T) {
	long := func(n int) string {
		const p = "http://127.0.0.1:8080/"
		return p + strings.Repeat("a", n-len(p))
	}
	tests := []struct {
		name                string
		uri                 string
		open, managed, cimd bool
		why                 string
	}{
		// Loopback (RFC 8252 §7.3), in the three forms DESIGN §6 names.
		{"127.0.0.1 with a port", "http://127.0.0.1:8080/callback", true, true, true, ""},
		{"127.0.0.1 without a port", "http://127.0.0.1/callback", true, true, true, ""},
		{"127.0.0.1 without a path", "http://127.0.0.1:8080", true, true, true, ""},
		{"[::1] with a port", "http://[::1]:8080/callback", true, true, true, ""},
		{"[::1] without a port", "http://[::1]/callback", true, true, true, ""},
		{"localhost with a port", "http://localhost:8080/callback", true, true, true, ""},
		{"lowest port", "http://127.0.0.1:1/cb", true, true, true, ""},
		{"highest port", "http://127.0.0.1:65535/cb", true, true, true, ""},
		{"port with a leading zero", "http://127.0.0.1:08080/cb", true, true, true, ""},

		// Ports.
		{"port 0", "http://127.0.0.1:0/cb", false, false, false, "invalid port"},
		{"port 00", "http://127.0.0.1:00/cb", false, false, false, "invalid port"},
		{"port 0 on [::1]", "http://[::1]:0/cb", false, false, false, "invalid port"},
		{"port 0 on localhost", "http://localhost:0/cb", false, false, false, "invalid port"},
		{"empty port", "http://127.0.0.1:/cb", false, false, false, "empty port"},
		{"empty port on [::1]", "http://[::1]:/cb", false, false, false, "empty port"},
		{"empty port on localhost", "http://localhost:/cb", false, false, false, "empty port"},
		{"empty port on https", "https://client.example:/cb", false, false, false, "empty port"},
		{"port 0 on https", "https://client.example:0/cb", false, false, false, "invalid port"},
		{"port 65536", "http://127.0.0.1:65536/cb", false, false, false, "invalid port"},
		{"named port", "http://127.0.0.1:http/cb", false, false, false, "not a valid URL"},
		{"negative port", "http://127.0.0.1:-1/cb", false, false, false, "not a valid URL"},

		// Hosts that look like loopback and are not (exactly) one of the three.
		{"127.0.0.2", "http://127.0.0.2/cb", false, false, false, "uses http on a host other than"},
		{"IPv4-mapped loopback", "http://[::ffff:127.0.0.1]/cb", false, false, false, "uses http on a host other than"},
		{"long form of ::1", "http://[0:0:0:0:0:0:0:1]/cb", false, false, false, "uses http on a host other than"},
		{"upper-case localhost", "http://LOCALHOST/cb", false, false, false, "uses http on a host other than"},
		{"localhost with a trailing dot", "http://localhost./cb", false, false, false, "invalid host name"},
		{"loopback-looking name", "http://127.0.0.1.evil.example/cb", false, false, false, "uses http on a host other than"},
		{"localhost subdomain", "http://localhost.evil.example/cb", false, false, false, "uses http on a host other than"},
		{"decimal IPv4", "http://2130706433/cb", false, false, false, "invalid host name"},
		{"IPv6 zone", "http://[::1%25lo]/cb", false, false, false, "invalid IPv6"},
		{"bracketed IPv4", "http://[127.0.0.1]/cb", false, false, false, "not a valid URL"},
		{"plain http elsewhere", "http://app.example/cb", false, false, false, "uses http on a host other than"},
		{"plain http on a private address", "http://192.168.1.5/cb", false, false, false, "uses http on a host other than"},

		// https.
		{"https on the document host", "https://client.example/cb", false, true, true, ""},
		{"https on the default port", "https://client.example:443/cb", false, true, true, ""},
		{"https without a path", "https://client.example", false, true, true, ""},
		{"https on another port", "https://client.example:8443/cb", false, true, false, "is on another host"},
		{"https on another host", "https://app.example/cb", false, true, false, "is on another host"},
		{"https on a subdomain", "https://evil.client.example/cb", false, true, false, "is on another host"},
		{"https on a parent-looking host", "https://client.example.evil.example/cb", false, true, false, "is on another host"},
		{"https on an IPv4 address", "https://192.0.2.1/cb", false, true, false, "is on another host"},
		{"https on an IPv6 address", "https://[2001:db8::1]/cb", false, true, false, "is on another host"},
		{"https on loopback", "https://127.0.0.1:8443/cb", false, true, false, "is on another host"},
		{"https without a host", "https:///cb", false, false, false, "not a valid absolute URL"},
		{"https with an empty label", "https://client..example/cb", false, false, false, "invalid host name"},
		{"https with a trailing dot", "https://client.example./cb", false, false, false, "invalid host name"},
		{"https on a hex IP", "https://0x7f.1/cb", false, false, false, "invalid host name"},

		// User information.
		{"user on loopback", "http://user@127.0.0.1/cb", false, false, false, "user name or password"},
		{"user and password on loopback", "http://user:pass@127.0.0.1/cb", false, false, false, "user name or password"},
		{"empty user information", "http://@127.0.0.1/cb", false, false, false, "user name or password"},
		{"user on https", "https://client.example@evil.example/cb", false, false, false, "user name or password"},

		// Fragments (RFC 6749 §3.1.2).
		{"fragment", "http://127.0.0.1/cb#x", false, false, false, "contains a fragment"},
		{"empty fragment", "http://127.0.0.1/cb#", false, false, false, "contains a fragment"},
		{"fragment on https", "https://client.example/cb#frag", false, false, false, "contains a fragment"},

		// Dot segments: a browser resolves them, so the URI would not say
		// where the code goes.
		{"dot-dot segment", "http://127.0.0.1/a/../cb", false, false, false, ". or .. path segments"},
		{"dot segment", "http://127.0.0.1/./cb", false, false, false, ". or .. path segments"},
		{"trailing dot-dot", "https://client.example/cb/..", false, false, false, ". or .. path segments"},
		{"encoded dot-dot", "http://127.0.0.1/a/%2e%2E/cb", false, false, false, ". or .. path segments"},
		{"dots inside a segment", "http://127.0.0.1/a..b/.cb", true, true, true, ""},

		// IDNs arrive as punycode; anything else is non-ASCII.
		{"punycode host", "https://xn--bcher-kva.example/cb", false, true, false, "is on another host"},
		{"Unicode host", "https://bücher.example/cb", false, false, false, "character that URLs do not allow"},
		{"Cyrillic o in localhost", "http://lоcalhost/cb", false, false, false, "character that URLs do not allow"},

		// Case: the scheme is written in lower case; https hosts compare
		// case-insensitively for a document, loopback hosts exactly.
		{"upper-case http", "HTTP://127.0.0.1/cb", false, false, false, "not in lower case"},
		{"mixed-case https", "Https://client.example/cb", false, false, false, "not in lower case"},
		{"upper-case host on https", "https://CLIENT.Example/cb", false, true, true, ""},
		{"upper-case path", "http://127.0.0.1/CallBack", true, true, true, ""},

		// Custom schemes, javascript: and data:.
		{"private-use scheme", "com.example.app:/oauth/cb", false, false, false, "not a valid absolute URL"},
		{"private-use scheme with a host", "com.example.app://cb", false, false, false, "neither https nor http"},
		{"custom scheme", "myapp://callback/x", false, false, false, "neither https nor http"},
		{"ftp", "ftp://files.example/cb", false, false, false, "neither https nor http"},
		{"websocket", "ws://127.0.0.1/cb", false, false, false, "neither https nor http"},
		{"file", "file:///etc/passwd", false, false, false, "not a valid absolute URL"},
		{"javascript:", "javascript:alert(1)", false, false, false, "not a valid absolute URL"},
		{"javascript: with a loopback authority", "javascript://127.0.0.1/%0aalert(1)", false, false, false, "neither https nor http"},
		{"data:", "data:text/html,<script>alert(1)</script>", false, false, false, "character that URLs do not allow"},
		{"data: base64", "data:text/html;base64,PHNjcmlwdD4=", false, false, false, "not a valid absolute URL"},

		// Query strings are allowed and compared exactly.
		{"query", "http://127.0.0.1/cb?x=1", true, true, true, ""},
		{"empty query", "http://127.0.0.1/cb?", true, true, true, ""},
		{"query on https", "https://client.example/cb?a=b&c=d", false, true, true, ""},

		// Percent-encoding.
		{"encoded non-ASCII", "http://127.0.0.1/caf%C3%A9", true, true, true, ""},
		{"encoded slash", "http://127.0.0.1/a%2Fb", true, true, true, ""},
		{"encoded space in the query", "http://127.0.0.1/cb?q=a%20b", true, true, true, ""},
		{"bare percent", "http://127.0.0.1/cb%", false, false, false, "malformed percent-encoding"},
		{"one hex digit", "http://127.0.0.1/cb%2", false, false, false, "malformed percent-encoding"},
		{"not hex", "http://127.0.0.1/%zz", false, false, false, "malformed percent-encoding"},
		{"bad escape in the query", "http://127.0.0.1/cb?x=%zz", false, false, false, "malformed percent-encoding"},
		{"escape in the host", "https://client%2eexample/cb", false, false, false, "not a valid URL"},

		// Length.
		{"2000 bytes", long(MaxRedirectURILen), true, true, true, ""},
		{"2001 bytes", long(MaxRedirectURILen + 1), false, false, false, "longer than 2000 characters"},

		// Characters RFC 3986 does not allow.
		{"non-ASCII path", "http://127.0.0.1/café", false, false, false, "character that URLs do not allow"},
		{"invalid UTF-8", "http://127.0.0.1/\xff", false, false, false, "character that URLs do not allow"},
		{"space", "http://127.0.0.1/c b", false, false, false, "character that URLs do not allow"},
		{"line feed", "http://127.0.0.1/cb\n", false, false, false, "character that URLs do not allow"},
		{"NUL", "http://127.0.0.1/\x00", false, false, false, "character that URLs do not allow"},
		{"backslash", "http://127.0.0.1\\@evil.example/cb", false, false, false, "character that URLs do not allow"},
		{"double quote", `http://127.0.0.1/"x"`, false, false, false, "character that URLs do not allow"},
		{"angle brackets", "http://127.0.0.1/<x>", false, false, false, "character that URLs do not allow"},
		{"braces", "http://127.0.0.1/{x}", false, false, false, "character that URLs do not allow"},
		{"bidi override", "http://127.0.0.1/cb\u202e", false, false, false, "character that URLs do not allow"},

		// Not absolute URIs.
		{"empty", "", false, false, false, "is not a valid URL"},
		{"relative", "/cb", false, false, false, "not a valid absolute URL"},
		{"scheme-relative", "//127.0.0.1/cb", false, false, false, "not a valid absolute URL"},
		{"no scheme", "127.0.0.1:8080/cb", false, false, false, "is not a valid URL"},
		{"opaque http", "http:127.0.0.1/cb", false, false, false, "not a valid absolute URL"},
		{"one slash", "http:/127.0.0.1/cb", false, false, false, "not a valid absolute URL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, use := range []struct {
				name string
				p    Policy
				want bool
			}{{"open registration", openRegistration, tc.open}, {"operators", operators, tc.managed}, {"document", document, tc.cimd}} {
				e := CheckRedirectURI(tc.uri, use.p)
				if (e == nil) != use.want {
					t.Errorf("%s: CheckRedirectURI(%q) = %v, want accepted %v", use.name, tc.uri, e, use.want)
				}
			}
			if tc.why != "" {
				e := CheckRedirectURI(tc.uri, operators)
				if e == nil {
					e = CheckRedirectURI(tc.uri, document)
				}
				if e == nil || !strings.Contains(e.Phrase(), tc.why) {
					t.Errorf("CheckRedirectURI(%q) = %v, want a refusal that %s", tc.uri, e, tc.why)
				}
			}
		})
	}
}

// Open registration refuses https with a message that says what to do
// instead; the operators' policy names both choices.
func TestRedirectURIMessages(t *testing.T) {
	tests := []struct {
		name, uri string
		p         Policy
		want      string
	}{
		{"https at open registration", "https://app.example/cb", openRegistration, "registers only loopback redirect URIs"},
		{"custom scheme at open registration", "myapp://cb", openRegistration, "the myapp: scheme is not allowed; this site registers only loopback http"},
		{"custom scheme for operators", "myapp://cb", operators, "the myapp: scheme is not allowed; use https or a loopback http URI"},
		{"plain http", "http://evil.example/cb", operators, `"http://evil.example/cb": plain http is allowed only for loopback addresses`},
		{"fragment", "https://app.example/cb#x", operators, "has a fragment"},
		{"javascript", "javascript:alert(1)", operators, "is not an absolute URI"},
		{"non-ASCII", "http://127.0.0.1/café", operators, "non-ASCII"},
		{"long URIs are not quoted", "http://127.0.0.1/" + strings.Repeat("a", 3000), operators, "a redirect URI is longer than 2000 characters"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := CheckRedirectURI(tc.uri, tc.p)
			if e == nil || !strings.Contains(e.Error(), tc.want) {
				t.Fatalf("CheckRedirectURI(%q) = %v, want %q", tc.uri, e, tc.want)
			}
			if len(e.Error()) > 400 {
				t.Errorf("a %d-byte message", len(e.Error()))
			}
		})
	}
}

// Every reason has its own wording in both forms.
func TestReasonsAreWorded(t *testing.T) {
	errs, phrases := map[string]reason{}, map[string]reason{}
	for r := malformed; r < numReasons; r++ {
		e := &URIError{URI: "x", reason: r, scheme: "s"}
		if prev, dup := errs[e.Error()]; dup {
			t.Errorf("reasons %d and %d both say %q", prev, r, e.Error())
		}
		if prev, dup := phrases[e.Phrase()]; dup {
			t.Errorf("reasons %d and %d both say %q", prev, r, e.Phrase())
		}
		errs[e.Error()], phrases[e.Phrase()] = r, r
	}
}

// TestMatchRedirectURI is authorization-time matching: exact, except that
// loopback URIs match on any port (RFC 8252 §7.3) with host, path and
// query exact.
func TestMatchRedirectURI(t *testing.T) {
	const loop = "http://127.0.0.1:5000/callback"
	tests := []struct {
		name       string
		registered []string
		requested  string
		want       bool
	}{
		{"the registered URI", []string{loop}, loop, true},
		{"loopback on another port", []string{loop}, "http://127.0.0.1:61999/callback", true},
		{"loopback without a port", []string{loop}, "http://127.0.0.1/callback", true},
		{"registered without a port", []string{"http://127.0.0.1/callback"}, "http://127.0.0.1:5000/callback", true},
		{"[::1] on another port", []string{"http://[::1]:5000/cb"}, "http://[::1]:6000/cb", true},
		{"localhost on another port", []string{"http://localhost:5000/cb"}, "http://localhost:6000/cb", true},
		{"the second registered URI", []string{"https://app.example/cb", loop}, "http://127.0.0.1:7/callback", true},
		{"empty path and /", []string{"http://127.0.0.1/"}, "http://127.0.0.1:5000", true},
		{"with the registered query", []string{"http://127.0.0.1/cb?a=1"}, "http://127.0.0.1:9/cb?a=1", true},
		{"https exactly", []string{"https://app.example/cb"}, "https://app.example/cb", true},

		{"localhost is not 127.0.0.1", []string{loop}, "http://localhost:5000/callback", false},
		{"127.0.0.1 is not localhost", []string{"http://localhost:5000/callback"}, loop, false},
		{"127.0.0.1 is not [::1]", []string{loop}, "http://[::1]:5000/callback", false},
		{"another path", []string{loop}, "http://127.0.0.1:5000/other", false},
		{"path case", []string{loop}, "http://127.0.0.1:5000/Callback", false},
		{"trailing slash", []string{loop}, "http://127.0.0.1:5000/callback/", false},
		{"path prefix", []string{loop}, "http://127.0.0.1:5000/callback/x", false},
		{"extra query", []string{loop}, "http://127.0.0.1:5000/callback?x=1", false},
		{"empty query", []string{loop}, "http://127.0.0.1:5000/callback?", false},
		{"missing query", []string{"http://127.0.0.1/cb?a=1"}, "http://127.0.0.1:9/cb", false},
		{"another query", []string{"http://127.0.0.1/cb?a=1"}, "http://127.0.0.1:9/cb?a=2", false},
		{"query order", []string{"http://127.0.0.1/cb?a=1&b=2"}, "http://127.0.0.1:9/cb?b=2&a=1", false},
		{"other percent-encoding", []string{"http://127.0.0.1/caf%C3%A9"}, "http://127.0.0.1:9/caf%c3%a9", false},
		{"encoded unreserved character", []string{"http://127.0.0.1/aA"}, "http://127.0.0.1:9/a%41", false},
		{"port 0", []string{loop}, "http://127.0.0.1:0/callback", false},
		{"empty port", []string{loop}, "http://127.0.0.1:/callback", false},
		{"port 65536", []string{loop}, "http://127.0.0.1:65536/callback", false},
		{"fragment", []string{loop}, loop + "#x", false},
		{"empty fragment", []string{loop}, loop + "#", false},
		{"user information", []string{loop}, "http://user@127.0.0.1:5000/callback", false},
		{"https for a loopback registration", []string{loop}, "https://127.0.0.1:5000/callback", false},
		{"upper-case scheme", []string{loop}, "HTTP://127.0.0.1:5000/callback", false},
		{"dot segments", []string{loop}, "http://127.0.0.1:5000/x/../callback", false},
		{"https on another port", []string{"https://app.example/cb"}, "https://app.example:8443/cb", false},
		{"https with the default port", []string{"https://app.example/cb"}, "https://app.example:443/cb", false},
		{"https host case", []string{"https://app.example/cb"}, "https://APP.example/cb", false},
		{"http for an https registration", []string{"https://app.example/cb"}, "http://app.example/cb", false},
		{"another host", []string{"https://app.example/cb"}, "https://evil.example/cb", false},
		{"a stored URI no policy allows", []string{"http://evil.example/cb"}, "http://evil.example/cb", false},
		{"a stored port 0", []string{"http://127.0.0.1:0/cb"}, "http://127.0.0.1:0/cb", false},
		{"nothing registered", nil, loop, false},
		{"nothing requested", []string{loop}, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := MatchRedirectURI(tc.registered, tc.requested); got != tc.want {
				t.Fatalf("MatchRedirectURI(%q, %q) = %v, want %v", tc.registered, tc.requested, got, tc.want)
			}
		})
	}
}

// FuzzRedirectURI checks the invariants of the rules on any input: no
// panic; whatever a policy accepts is an absolute http(s) URI with a host
// and without fragment or user information; open registration and
// documents accept only what the operators' policy accepts; and matching
// never lets a request through that the registered URI's policy would
// refuse, nor relates anything but equal strings and loopback URIs that
// differ in the port.
func FuzzRedirectURI(f *testing.F) {
	for _, s := range [][2]string{
		{"http://127.0.0.1:5000/callback", "http://127.0.0.1:6000/callback"},
		{"http://127.0.0.1/cb", "http://127.0.0.1:0/cb"},
		{"http://127.0.0.1/cb", "http://127.0.0.1:/cb"},
		{"http://[::1]:1/cb?x=1", "http://[::1]:65535/cb?x=1"},
		{"http://localhost/cb", "http://127.0.0.1/cb"},
		{"https://client.example/cb", "https://client.example/cb"},
		{"https://CLIENT.example:443/cb", "https://client.example/cb"},
		{"http://127.0.0.1/cb#x", "http://127.0.0.1/cb#x"},
		{"http://user@127.0.0.1/cb", "http://user@127.0.0.1/cb"},
		{"http://127.0.0.1/a/../cb", "http://127.0.0.1/cb"},
		{"javascript:alert(1)", "data:text/html,x"},
		{"myapp://cb", "com.example.app:/cb"},
		{"http://127.0.0.1/caf%C3%A9", "http://127.0.0.1:1/caf%c3%a9"},
		{"http://127.0.0.1/", "http://127.0.0.1:9"},
		{"http://127.0.0.1/cb?", "http://127.0.0.1:9/cb"},
		{"HTTP://127.0.0.1/cb", "http://127.0.0.1/cb"},
		{"https://xn--bcher-kva.example/cb", "https://bücher.example/cb"},
		{"http://[::1%25lo]/cb", "http://[fe80::1]/cb"},
		{"", "%"},
	} {
		f.Add(s[0], s[1])
	}
	policies := []Policy{openRegistration, operators, document}
	f.Fuzz(func(t *testing.T, registered, requested string) {
		for _, s := range []string{registered, requested} {
			for _, p := range policies {
				e := CheckRedirectURI(s, p)
				if e != nil {
					if !utf8.ValidString(e.Error()) || e.Phrase() == "" {
						t.Fatalf("CheckRedirectURI(%q): message %q / %q", s, e.Error(), e.Phrase())
					}
					continue
				}
				u, err := url.Parse(s)
				if err != nil || !u.IsAbs() || u.Host == "" || u.Opaque != "" || u.User != nil || u.Fragment != "" ||
					strings.Contains(s, "#") || (u.Scheme != "http" && u.Scheme != "https") || len(s) > MaxRedirectURILen {
					t.Fatalf("%+v accepted %q", p, s)
				}
				for i := 0; i < len(s); i++ {
					if s[i] <= ' ' || s[i] >= 0x7f {
						t.Fatalf("%+v accepted %q with byte %#x", p, s, s[i])
					}
				}
				if u.Port() == "0" || strings.HasSuffix(u.Host, ":") {
					t.Fatalf("%+v accepted %q: port 0 or empty", p, s)
				}
				if p != operators && CheckRedirectURI(s, operators) != nil {
					t.Fatalf("%+v accepted %q, which operators may not register", p, s)
				}
				if p.LoopbackOnly {
					if _, ok := parseLoopback(s); !ok {
						t.Fatalf("open registration accepted %q, which is not loopback", s)
					}
				}
			}
		}
		if CheckRedirectURI(registered, operators) == nil && !MatchRedirectURI([]string{registered}, registered) {
			t.Fatalf("%q does not match itself", registered)
		}
		if !MatchRedirectURI([]string{registered}, requested) {
			return
		}
		for _, p := range policies {
			if CheckRedirectURI(registered, p) == nil && CheckRedirectURI(requested, p) != nil {
				t.Fatalf("%q matches %q, which %+v refuses", requested, registered, p)
			}
		}
		if requested != registered {
			reg, ok1 := parseLoopback(registered)
			req, ok2 := parseLoopback(requested)
			if !ok1 || !ok2 || reg != req {
				t.Fatalf("%q matches %q: neither equal nor the same loopback URI", requested, registered)
			}
			if CheckRedirectURI(registered, operators) == nil && !MatchRedirectURI([]string{requested}, registered) {
				t.Fatalf("%q matches %q but not the other way round", requested, registered)
			}
		}
	})
}
