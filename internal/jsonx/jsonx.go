package jsonx

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// DuplicateKey returns the first member name that an object in data
// repeats, at any depth, and whether there is one. Data that is not JSON
// has none to report (the caller's decoder refuses it).
func DuplicateKey(data []byte) (string, bool) {
	path, dup := duplicate(data)
	if !dup {
		return "", false
	}
	return path[len(path)-1], true
}

// DuplicatePath is DuplicateKey naming the member by its path from the
// top: the names of the objects it is in, joined with dots, with an
// array element's index in brackets ("overrides.token_per_client",
// "items[2].name").
func DuplicatePath(data []byte) (string, bool) {
	path, dup := duplicate(data)
	if !dup {
		return "", false
	}
	var b strings.Builder
	for _, p := range path {
		if b.Len() > 0 && !strings.HasPrefix(p, "[") {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	return b.String(), true
}

// duplicate returns the path of the first repeated member: the names of
// the enclosing members and "[i]" for array elements, ending with the
// repeated name.
func duplicate(data []byte) ([]string, bool) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	// One frame per open object or array: the names seen in an object
	// (nil for an array), the frame's own name in the path, and an
	// array's next index. expectKey says an object awaits a name next.
	type frame struct {
		seen map[string]bool
		at   string // this object's or array's step in the path
		next int    // an array's next element
		key  string // an object's current member
	}
	var stack []*frame
	expectKey := false
	path := func(last string) []string {
		var out []string
		for i, f := range stack {
			if i > 0 || f.at != "" {
				out = append(out, f.at)
			}
		}
		return append(out, last)
	}
	// step is the path step of the value about to start in the
	// innermost frame.
	step := func() string {
		if len(stack) == 0 {
			return ""
		}
		f := stack[len(stack)-1]
		if f.seen == nil {
			s := "[" + strconv.Itoa(f.next) + "]"
			f.next++
			return s
		}
		return f.key
	}
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) || err != nil {
			return nil, false
		}
		if expectKey {
			if delim, ok := tok.(json.Delim); ok && delim == '}' {
				stack = stack[:len(stack)-1]
				expectKey = len(stack) > 0 && stack[len(stack)-1].seen != nil
				continue
			}
			name, _ := tok.(string)
			f := stack[len(stack)-1]
			if f.seen[name] {
				return path(name), true
			}
			f.seen[name] = true
			f.key = name
			expectKey = false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{seen: map[string]bool{}, at: step()})
			expectKey = true
			continue
		case json.Delim('['):
			stack = append(stack, &frame{at: step()})
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
		default:
			step() // a scalar takes its array index
		}
		// After a value (or an array's end) inside an object, a name comes
		// next.
		expectKey = len(stack) > 0 && stack[len(stack)-1].seen != nil
	}
}

// BadText reports whether data, well-formed JSON, carries text that a
// decoder would not keep as sent: bytes that are not UTF-8 (RFC 8259
// §8.1), or a \u escape of a lone UTF-16 surrogate (§8.2). Go's decoder
// turns both into U+FFFD, so what was stored would not read back as sent.
func BadText(data []byte) bool {
	if !utf8.Valid(data) {
		return true
	}
	inString := false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if !inString {
			inString = c == '"'
			continue
		}
		switch c {
		case '"':
			inString = false
		case '\\':
			if i+1 < len(data) && data[i+1] == 'u' {
				r, ok := hex4(data, i+2)
				switch {
				case !ok:
					return true
				case utf16.IsSurrogate(r) && r < 0xDC00:
					// A high surrogate: a low one must follow.
					low, ok := rune(0), i+7 < len(data) && data[i+6] == '\\' && data[i+7] == 'u'
					if ok {
						low, ok = hex4(data, i+8)
					}
					if !ok || low < 0xDC00 || low > 0xDFFF {
						return true
					}
					i += 11
					continue
				case utf16.IsSurrogate(r):
					return true // a low surrogate alone
				}
				i += 5
				continue
			}
			i++ // the escaped character
		}
	}
	return false
}

// hex4 is the value of the four hexadecimal digits at data[i:].
func hex4(data []byte, i int) (rune, bool) {
	if i+4 > len(data) {
		return 0, false
	}
	var r rune
	for _, c := range data[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
