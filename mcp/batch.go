package mcp

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/lectern/lectern/vocab"
)

// MaxBatch is the most messages one JSON-RPC batch may carry (DESIGN §11).
// Batches exist only under protocol versions before 2025-06-18; the MCP
// clients that still speak them send a handful of messages at a time. One
// anonymous batch of 8,000 tools/call once cost 640 MB and slowed every
// other site of the replica: each message is a tool call with its own
// database reads, so the batch, not the body size, is the unit of work.
const MaxBatch = vocab.MCPMaxBatch

// Protocol revisions that decide how a batch is treated.
const (
	// assumedVersion is the version of a request without an
	// MCP-Protocol-Version header (MCP 2025-06-18, Transports: "the server
	// SHOULD assume protocol version 2025-03-26"), as the go-sdk assumes.
	assumedVersion = "2025-03-26"
	// batchlessVersion is the first revision without JSON-RPC batching.
	batchlessVersion = "2025-06-18"
)

// batchRefusal says why the request body, when it is a JSON-RPC batch (a
// JSON array), is refused under the request's protocol version, or "" when
// it is not refused. It never runs a message: a refused batch is answered
// as a whole before the go-sdk sees it, and the work of deciding is bounded
// (it reads at most MaxBatch+1 elements).
//
// Anything that is not a well-formed batch passes on unchanged, so that the
// SDK answers it as it answers every malformed body.
func batchRefusal(r *http.Request, body []byte) string {
	body = bytes.TrimLeft(body, " \t\r\n")
	if len(body) == 0 || body[0] != '[' {
		return ""
	}
	version := r.Header.Get("Mcp-Protocol-Version")
	if version == "" {
		version = assumedVersion
	}
	// Revision names are dates, so they compare as strings. Names that are
	// no known revision were refused before (unsupportedVersion).
	if version >= batchlessVersion {
		return "JSON-RPC batches are not part of MCP from protocol version " + batchlessVersion +
			" on: send one message per request"
	}
	if n := batchLen(body, MaxBatch+1); n > MaxBatch {
		return "a JSON-RPC batch may carry at most " + strconv.Itoa(MaxBatch) +
			" messages: send the others in further requests"
	}
	return ""
}

// batchLen counts the elements of the JSON array body, stopping at limit.
// A body that is not a well-formed array before that counts what was read.
func batchLen(body []byte, limit int) int {
	dec := json.NewDecoder(bytes.NewReader(body))
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return 0
	}
	n := 0
	for n < limit && dec.More() {
		var m json.RawMessage
		if dec.Decode(&m) != nil {
			return n
		}
		n++
	}
	return n
}
