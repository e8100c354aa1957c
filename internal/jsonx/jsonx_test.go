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

// DuplicatePath names the repeated member by where it is, as the admin
// API names fields ("overrides.token_per_client").
func TestDuplicatePath(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string
	}{
		{`{"query":"a","query":"b"}`, "query"},
		{`{"overrides":{"token_per_client":5,"token_per_client":6}}`, "overrides.token_per_client"},
		{`{"a":1,"b":{"c":1,"c":2}}`, "b.c"},
		{`{"a":[{"x":1},{"x":2,"x":3}]}`, "a[1].x"},
		{`{"a":[1,[2],{"x":2,"x":3}]}`, "a[2].x"},
		{`{"a":{"b":1},"b":2,"a":3}`, "a"},
		{`[{"k":1},{"k":1,"k":2}]`, "[1].k"},
		{`{"a":{"k":1},"b":{"k":1}}`, ""},
		{`not json`, ""},
	} {
		got, found := DuplicatePath([]byte(c.in))
		if got != c.want || found != (c.want != "") {
			t.Errorf("DuplicatePath(%s) = %q, %v; want %q", c.in, got, found, c.want)
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
