package mcp

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/lectern/lectern/authserver/bearer"
	"github.com/lectern/lectern/authserver/scope"
	"github.com/lectern/lectern/tenant"
)

// readBody reads the request body (at most maxBody bytes) and puts it back
// for the SDK.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	_ = r.Body.Close()
	if err != nil {
		return nil, err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body, nil
}

// rpcCall is the part of a JSON-RPC message the gate looks at.
type rpcCall struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// gate finds the first tools/call in body (one message or a batch) of a
// known tool the caller may not use, and returns its registry index.
//
// The gate only chooses the HTTP answer. Access itself never depends on it:
// a tool the caller may not use is not on the caller's server at all, so a
// body the gate cannot read still reaches no such tool.
func gate(body []byte, c *caller) (int, bool) {
	body = bytes.TrimLeft(body, " \t\r\n")
	var msgs []rpcCall
	if len(body) > 0 && body[0] == '[' {
		if json.Unmarshal(body, &msgs) != nil {
			return 0, false
		}
	} else {
		var m rpcCall
		if json.Unmarshal(body, &m) != nil {
			return 0, false
		}
		msgs = []rpcCall{m}
	}
	for _, m := range msgs {
		if m.Method != "tools/call" {
			continue
		}
		var p struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(m.Params, &p) != nil {
			continue
		}
		if i, ok := registryIndex[p.Name]; ok && !c.may(i) {
			return i, true
		}
	}
	return 0, false
}

// challenge answers a call of a tool the caller may not use, so that MCP
// clients know what to do (MCP authorization, scope challenges):
//
//   - anonymous: 401 invalid_token with resource_metadata and the tool's
//     scope, which starts the client's authorization (RFC 9728 §5.1) with
//     the right scope;
//   - a token without the scope: 403 insufficient_scope with scope = what
//     the tool needs (RFC 6750 §3.1), on which clients step up;
//   - a token with the scope that the person's role no longer allows: the
//     same 403, saying so (re-authorizing cannot help until the role
//     changes).
func challenge(w http.ResponseWriter, site *tenant.Site, c *caller, t *toolSpec) {
	need := scope.Join(t.scopes)
	if c.token == nil {
		e := bearer.InvalidToken("the tool " + t.name + " needs an access token with scope " + need)
		bearer.WriteError(scopedChallenge{ResponseWriter: w, scope: need}, site, e)
		return
	}
	e := bearer.InsufficientScope(t.scopes...)
	var withheld []string
	for _, s := range t.scopes {
		for _, h := range c.withheld {
			if s == h {
				withheld = append(withheld, s)
			}
		}
	}
	if len(withheld) > 0 {
		e.Description = "the person's role at this site does not allow " + strings.Join(withheld, " ") + ", which the tool " + t.name + " needs"
	} else {
		e.Description = "the tool " + t.name + " needs the scope " + need
	}
	bearer.WriteError(w, site, e)
}

// scopedChallenge adds scope="..." to the WWW-Authenticate challenge of a
// 401 that bearer.WriteError writes (which names no scope for 401s), as MCP
// clients read the scope to request from it. Scope names are from the fixed
// vocabulary, so they need no quoting.
type scopedChallenge struct {
	http.ResponseWriter
	scope string
}

func (s scopedChallenge) WriteHeader(code int) {
	h := s.Header()
	if v := h.Get("WWW-Authenticate"); v != "" && s.scope != "" {
		h.Set("WWW-Authenticate", v+`, scope="`+s.scope+`"`)
	}
	s.ResponseWriter.WriteHeader(code)
}
