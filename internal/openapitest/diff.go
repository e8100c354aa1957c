package openapitest

import (
	"fmt"
	"reflect"
	"sort"
)

// Diff compares two decoded JSON documents and returns, sorted, one line
// per place they differ: "<path>: <a> | <b>" for values, "<path>: type"
// and "<path>: length" for mismatched shapes.
func Diff(a, b any) []string {
	var out []string
	walk("", a, b, &out)
	sort.Strings(out)
	return out
}

func walk(path string, a, b any, out *[]string) {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			*out = append(*out, path+": type")
			return
		}
		keys := map[string]bool{}
		for k := range av {
			keys[k] = true
		}
		for k := range bv {
			keys[k] = true
		}
		for k := range keys {
			walk(path+"."+k, av[k], bv[k], out)
		}
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			*out = append(*out, path+": length")
			return
		}
		for i := range av {
			walk(fmt.Sprintf("%s[%d]", path, i), av[i], bv[i], out)
		}
	default:
		if !reflect.DeepEqual(a, b) {
			*out = append(*out, fmt.Sprintf("%s: %v | %v", path, a, b))
		}
	}
}
