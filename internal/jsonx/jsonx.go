package jsonx

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
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
