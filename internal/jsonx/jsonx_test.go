package jsonx

import "testing"

func TestDuplicateKey(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string
	}{
		{`{"query":"a","query":"b"}`, "query"},
		{`{"a":1,"b":{"c":1,"c":2}}`, "c"},
		{`{"a":[{"x":1},{"x":2,"x":3}]}`, "x"},
		{`{"a":{"b":1},"b":2,"a":3}`, "a"},
		{`[{"k":1},{"k":1}]`, ""},
		{`{"a":{"k":1},"b":{"k":1}}`, ""},
		{`{"a":[1,2,{"b":[]}],"c":"}"}`, ""},
		{`{}`, ""},
		{`not json`, ""},
		{`{"a":1,"a"`, "a"},
	} {
		got, found := DuplicateKey([]byte(c.in))
		if got != c.want || found != (c.want != "") {
			t.Errorf("DuplicateKey(%s) = %q, %v; want %q", c.in, got, found, c.want)
		}
	}
}

// Text a decoder would change (not UTF-8, a lone surrogate escape) is
// reported; every other string, escapes and pairs included, is not.
func TestBadText(t *testing.T) {
	for _, c := range []struct {
		in  string
		bad bool
	}{
		{`{"title":"plain"}`, false},
		{`{"title":"ünïcödé 😀 \u00fc \ud83d\ude00 \\ud800 \" \\"}`, false},
		{`{"t":"\uD83D\uDE00"}`, false},
		{"{\"title\":\"\xff\xfe\"}", true},
		{"{\"ti\xc3tle\":1}", true},
		{`{"title":"a\ud800"}`, true},
		{`{"title":"a\ud800b"}`, true},
		{`{"title":"\ud83d\u0041"}`, true},
		{`{"title":"\ude00"}`, true},
		{`{"title":"\ud800\\u"}`, true},
		{`["\udbff\udfff", 1, null]`, false},
	} {
		if got := BadText([]byte(c.in)); got != c.bad {
			t.Errorf("BadText(%q) = %v; want %v", c.in, got, c.bad)
		}
	}
}
