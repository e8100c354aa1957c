package mcp

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// rpcHead is what /mcp reads of a JSON-RPC message before the go-sdk does:
// its id (as sent) and its method.
type rpcHead struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

// readHeads reads the id and method of every message in body, one message
// or a batch (batch reports which). A body that is neither gives nothing;
// the SDK refuses it.
func readHeads(body []byte) (heads []rpcHead, batch bool) {
	body = bytes.TrimLeft(body, " \t\r\n")
	if len(body) > 0 && body[0] == '[' {
		if json.Unmarshal(body, &heads) != nil {
			return nil, true
		}
		return heads, true
	}
	var h rpcHead
	if json.Unmarshal(body, &h) != nil {
		return nil, false
	}
	return []rpcHead{h}, false
}

// maxExactID is the largest integer id the go-sdk answers with unchanged:
// it decodes ids through float64 (jsonrpc2.MakeID), which holds integers
// exactly up to 2^53, and truncates fractions.
const maxExactID = 1<<53 - 1

// idRefusal says why an id in heads cannot be answered as sent, or "".
// MCP requests carry "a string or integer ID"; JSON-RPC 2.0 §5 wants the
// answer's id to be the request's. The go-sdk answers id 1.5 as 1 (which
// may be another pending request of the client) and 2^53+1 as 2^53, so
// such ids are refused before it sees them. Ids of other types (true, an
// object) the SDK refuses itself.
func idRefusal(heads []rpcHead) string {
	for _, h := range heads {
		if !numericID(h.ID) || exactID(h.ID) {
			continue
		}
		return "a request id must be a string or an integer between -" + strconv.Itoa(maxExactID) +
			" and " + strconv.Itoa(maxExactID) + ", not " + bounded(string(h.ID))
	}
	return ""
}

// requestID is the id of a single request, for the errors that answer it
// (JSON-RPC 2.0 §5: "the same as the value of the id member in the Request
// Object"), or nil (null) when there is none to read: a batch, a
// notification, an id that is no string or exact integer.
func requestID(heads []rpcHead, batch bool) json.RawMessage {
	if batch || len(heads) != 1 {
		return nil
	}
	id := heads[0].ID
	if len(id) == 0 || (id[0] != '"' && !exactID(id)) {
		return nil
	}
	return id
}

func numericID(id json.RawMessage) bool {
	return len(id) > 0 && (id[0] == '-' || (id[0] >= '0' && id[0] <= '9'))
}

// exactID reports whether id is an integer the SDK answers with unchanged.
func exactID(id json.RawMessage) bool {
	n, err := strconv.ParseInt(string(id), 10, 64)
	return err == nil && n >= -maxExactID && n <= maxExactID
}
