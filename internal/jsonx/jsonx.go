package jsonx

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"unicode/utf16"
	"unicode/utf8"
)

// DuplicateKey returns the first member name that an object in data
// repeats, at any depth, and whether there is one. Data that is not JSON
// has none to report (the caller's decoder refuses it).
func DuplicateKey(data []byte) (string, bool) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	// One entry per open object or array: the names seen in an object
	// (nil for an array); expectKey says an object awaits a name next.
	var stack []map[string]bool
	expectKey := false
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) || err != nil {
			return "", false
		}
		if expectKey {
			if delim, ok := tok.(json.Delim); ok && delim == '}' {
				stack = stack[:len(stack)-1]
				expectKey = len(stack) > 0 && stack[len(stack)-1] != nil
				continue
			}
			name, _ := tok.(string)
			seen := stack[len(stack)-1]
			if seen[name] {
				return name, true
			}
			seen[name] = true
			expectKey = false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, map[string]bool{})
			expectKey = true
			continue
		case json.Delim('['):
			stack = append(stack, nil)
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		// After a value (or an array's end) inside an object, a name comes
		// next.
		expectKey = len(stack) > 0 && stack[len(stack)-1] != nil
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
