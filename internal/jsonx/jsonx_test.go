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
