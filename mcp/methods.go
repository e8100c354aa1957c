package mcp

import (
	"net/http"
	"strings"

	"github.com/lectern/lectern/tenant"
)

// Methods are the HTTP methods /mcp serves, in the order echo lists them in
// the Allow header of its own 405 answers (built from the methods routed
// here), so that every 405 and OPTIONS answer of /mcp names the same list
// (RFC 9110 §10.2.1, §15.5.6): POST carries JSON-RPC; a plain GET or HEAD
// describes the endpoint (RFC 9110 §9.1: GET and HEAD, like every other
// document); OPTIONS names the methods. DELETE is not among them: the
// server is stateless, there is no session to end.
var Methods = []string{http.MethodOptions, http.MethodGet, http.MethodHead, http.MethodPost}

// allow is Methods as an Allow header.
var allow = strings.Join(Methods, ", ")

// methodNotAllowed answers a method /mcp does not serve, or a GET asking
// for an event stream: a stateless server offers none (MCP Streamable
// HTTP: "or else return HTTP 405 Method Not Allowed").
func methodNotAllowed(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Allow", allow)
	desc := "method " + bounded(r.Method) + " is not allowed here"
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		desc = "this MCP server is stateless and offers no event stream: POST JSON-RPC messages instead"
	}
	tenant.WriteError(w, http.StatusMethodNotAllowed, "method_not_allowed", desc)
}
