package mcp

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// maxEcho bounds an error message that may repeat client input (DESIGN
// §11: at most ~200 bytes of input come back). The go-sdk quotes what it
// could not use: a tool argument that fails its schema, params that do not
// decode, a header that does not match; a 900 KB argument once came back
// whole. Lectern's own messages are shorter than this, so cutting the whole
// message is enough and needs no knowledge of the SDK's wording.
const maxEcho = 200

// bounded returns s cut to at most maxEcho bytes on a character boundary,
// saying that it was cut.
func bounded(s string) string {
	if len(s) <= maxEcho {
		return s
	}
	cut := maxEcho
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + " […]"
}

// boundAnswer bounds the error texts of a JSON-RPC answer body (one
// message or a batch of them) as the SDK wrote it: the message of every
// error (its data, which may repeat input too, is dropped when longer than
// maxEcho), and the text content of every tool result with isError, where
// the SDK reports arguments that fail their schema. It reports false when
// nothing needed bounding, so that the body goes out as written.
func boundAnswer(body []byte) ([]byte, bool) {
	// Most answers carry neither; the keys cannot occur inside a JSON string
	// unescaped, so a body without them needs no parsing.
	if !bytes.Contains(body, []byte(`"error":`)) && !bytes.Contains(body, []byte(`"isError":true`)) {
		return body, false
	}
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		var msgs []map[string]json.RawMessage
		if json.Unmarshal(body, &msgs) != nil {
			return body, false
		}
		changed := false
		for _, m := range msgs {
			changed = boundMessage(m) || changed
		}
		if !changed {
			return body, false
		}
		out, err := json.Marshal(msgs)
		return out, err == nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil || !boundMessage(m) {
		return body, false
	}
	out, err := json.Marshal(m)
	return out, err == nil
}

// boundMessage bounds one JSON-RPC message in place and reports whether it
// changed it.
func boundMessage(m map[string]json.RawMessage) bool {
	if raw, ok := m["error"]; ok {
		var e map[string]json.RawMessage
		if json.Unmarshal(raw, &e) != nil {
			return false
		}
		changed := false
		var msg string
		if json.Unmarshal(e["message"], &msg) == nil && len(msg) > maxEcho {
			e["message"], _ = json.Marshal(bounded(msg))
			changed = true
		}
		if d, ok := e["data"]; ok && len(d) > maxEcho {
			delete(e, "data")
			changed = true
		}
		if changed {
			m["error"], _ = json.Marshal(e)
		}
		return changed
	}
	raw, ok := m["result"]
	if !ok {
		return false
	}
	var res struct {
		IsError bool                         `json:"isError"`
		Content []map[string]json.RawMessage `json:"content"`
	}
	if json.Unmarshal(raw, &res) != nil || !res.IsError {
		return false
	}
	var r map[string]json.RawMessage
	if json.Unmarshal(raw, &r) != nil {
		return false
	}
	changed := false
	for _, c := range res.Content {
		var text string
		if json.Unmarshal(c["text"], &text) == nil && len(text) > maxEcho {
			c["text"], _ = json.Marshal(bounded(text))
			changed = true
		}
	}
	if changed {
		r["content"], _ = json.Marshal(res.Content)
		m["result"], _ = json.Marshal(r)
	}
	return changed
}
