package mcp

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/lectern/lectern/tenant"
)

// The go-sdk's Streamable HTTP handler answers the requests it refuses
// with http.Error: a plain-text body. Lectern answers in JSON everywhere,
// so sdkErrorWriter catches those answers and rewrites them:
//
//   - a 400 about the payload becomes a JSON-RPC error response without an
//     id (JSON-RPC 2.0 §5, which the MCP transport allows in the body of an
//     HTTP error): -32700 "Parse error" when the body is not JSON at all,
//     -32600 "Invalid Request" when it is JSON but not a message the server
//     accepts (no "jsonrpc": "2.0", an empty batch, an unusable Accept);
//   - every other status (405, 413, 415, ...) becomes the RFC 6749-style
//     error of every other endpoint; a 5xx names no internals.
//
// Successful answers, and errors the SDK writes as JSON-RPC itself, pass
// through untouched.

// JSON-RPC 2.0 error codes.
const (
	rpcParseError     = -32700
	rpcInvalidRequest = -32600
)

// maxSDKError bounds the SDK's error text kept for the rewrite.
const maxSDKError = 1024

type sdkErrorWriter struct {
	http.ResponseWriter
	// validJSON says whether the request body parsed as JSON.
	validJSON bool
	status    int // the SDK's plain-text error status; 0 while passing through
	text      bytes.Buffer
	passed    bool // something went through: nothing left to rewrite
}

func (s *sdkErrorWriter) WriteHeader(code int) {
	if !s.passed && s.status == 0 && code >= 400 && strings.HasPrefix(s.Header().Get("Content-Type"), "text/plain") {
		s.status = code
		return
	}
	s.passed = true
	s.ResponseWriter.WriteHeader(code)
}

func (s *sdkErrorWriter) Write(p []byte) (int, error) {
	if s.status != 0 {
		if room := maxSDKError - s.text.Len(); room > 0 {
			s.text.Write(p[:min(len(p), room)])
		}
		return len(p), nil
	}
	s.passed = true
	return s.ResponseWriter.Write(p)
}

// Flush passes through while nothing is being rewritten.
func (s *sdkErrorWriter) Flush() {
	if s.status != 0 {
		return
	}
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		s.passed = true
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (s *sdkErrorWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// finish writes the rewritten error, if the SDK refused the request.
func (s *sdkErrorWriter) finish() {
	if s.status == 0 {
		return
	}
	w := s.ResponseWriter
	msg := strings.TrimSpace(s.text.String())
	w.Header().Set("X-Content-Type-Options", "nosniff")
	switch {
	case s.status == http.StatusBadRequest:
		code, prefix := rpcInvalidRequest, "Invalid Request: "
		if !s.validJSON {
			code, prefix = rpcParseError, "Parse error: "
			msg = "the request body is not JSON"
		}
		writeRPCError(w, s.status, code, prefix+msg)
	case s.status >= 500:
		tenant.WriteError(w, s.status, "server_error", "the MCP server could not answer; try again")
	default:
		tenant.WriteError(w, s.status, tenant.ErrorCode(s.status), lowerFirst(msg))
	}
}

// writeRPCError writes a JSON-RPC error response without an id.
func writeRPCError(w http.ResponseWriter, status, code int, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	type rpcError struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	_ = json.NewEncoder(w).Encode(struct {
		JSONRPC string    `json:"jsonrpc"`
		ID      *struct{} `json:"id"`
		Error   rpcError  `json:"error"`
	}{JSONRPC: "2.0", Error: rpcError{Code: code, Message: message}})
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}
