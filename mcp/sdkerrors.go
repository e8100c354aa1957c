package mcp

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/lectern/lectern/tenant"
	"github.com/lectern/lectern/vocab"
)

// The go-sdk's Streamable HTTP handler answers the requests it refuses
// with http.Error: a plain-text body. Lectern answers in JSON everywhere,
// so sdkErrorWriter catches those answers and rewrites them:
//
//   - a 400 about one well-formed request whose id could be read answers
//     that request, with its id (JSON-RPC 2.0 §5, §5.1): -32601 "Method not
//     found" with 404 for a method the server does not have, -32602
//     "Invalid params" with 400 for a method called without its params. The
//     statuses are those the go-sdk gives (and SEP-2575 requires) from
//     protocol 2026-07-28 on, where it answers unknown methods itself; under
//     earlier versions the SDK's answer is plain text;
//   - any other 400 about the payload becomes a JSON-RPC error response
//     without an id (JSON-RPC 2.0 §5, which the MCP transport allows in the
//     body of an HTTP error): -32700 "Parse error" when the body is not JSON
//     at all, -32600 "Invalid Request" when it is JSON but not a message the
//     server accepts (no "jsonrpc": "2.0", an empty batch, a batch holding
//     an unknown method, an unusable Accept);
//   - every other status (413, 415, ...) becomes the RFC 6749-style error of
//     every other endpoint; a 5xx names no internals.
//
// JSON-RPC answers, the SDK's errors in that form included, are held and
// go out with their error texts bounded (boundAnswer): the SDK quotes the
// input it refused, in refusals and in the errors of a 200 answer alike.
// Anything else (event streams, 202 Accepted) passes through untouched.

// JSON-RPC 2.0 error codes.
const (
	rpcParseError     = -32700
	rpcInvalidRequest = -32600
	rpcMethodNotFound = -32601
	rpcInvalidParams  = -32602
)

// How the go-sdk's plain-text refusals (checkRequest in its mcp/shared.go)
// name the two errors about a single request: jsonrpc2.ErrNotHandled's text
// and the missing-params check. TestMCPRequestErrorsCarryTheID fails if an
// SDK update changes them.
const (
	sdkNotHandled    = "JSON RPC not handled"
	sdkMissingParams = `missing required "params"`
)

// Bounds of what is held back for a rewrite. A plain-text refusal is cut
// to maxEcho anyway. A JSON-RPC answer is at most MaxBatch tool results of
// bounded pages; one that is larger still goes out, unexamined.
const (
	maxSDKText   = 4 << 10
	maxHeldReply = 8 << 20
)

// held is what sdkErrorWriter holds back.
type held int

const (
	heldNothing held = iota
	heldText         // the SDK's plain-text refusal
	heldReply        // a JSON-RPC answer
)

type sdkErrorWriter struct {
	http.ResponseWriter
	// validJSON says whether the request body parsed as JSON.
	validJSON bool
	// id and method are those of the request when the body is one request
	// with an id that can be answered (requestID); id is nil otherwise.
	id     json.RawMessage
	method string
	held   held
	status int // the status of what is held
	body   bytes.Buffer
	passed bool // something went through: nothing left to rewrite
}

func (s *sdkErrorWriter) WriteHeader(code int) {
	if !s.passed && s.held == heldNothing {
		switch ct := s.Header().Get("Content-Type"); {
		case code >= 400 && strings.HasPrefix(ct, "text/plain"):
			s.held, s.status = heldText, code
			return
		case strings.HasPrefix(ct, "application/json"):
			s.held, s.status = heldReply, code
			return
		}
	}
	s.passed = true
	s.ResponseWriter.WriteHeader(code)
}

func (s *sdkErrorWriter) Write(p []byte) (int, error) {
	if !s.passed && s.held == heldNothing {
		s.WriteHeader(http.StatusOK)
	}
	switch s.held {
	case heldText:
		if room := maxSDKText - s.body.Len(); room > 0 {
			s.body.Write(p[:min(len(p), room)])
		}
		return len(p), nil
	case heldReply:
		if s.body.Len()+len(p) <= maxHeldReply {
			return s.body.Write(p)
		}
		s.release()
	}
	s.passed = true
	return s.ResponseWriter.Write(p)
}

// release sends what is held as it is and passes the rest through.
func (s *sdkErrorWriter) release() {
	s.held, s.passed = heldNothing, true
	s.ResponseWriter.WriteHeader(s.status)
	_, _ = s.ResponseWriter.Write(s.body.Bytes())
	s.body.Reset()
}

// Flush passes through while nothing is held.
func (s *sdkErrorWriter) Flush() {
	if s.held != heldNothing {
		return
	}
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		s.passed = true
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (s *sdkErrorWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// finish writes what is held: the JSON-RPC answer with its error texts
// bounded, or the rewrite of the SDK's plain-text refusal.
func (s *sdkErrorWriter) finish() {
	w := s.ResponseWriter
	switch s.held {
	case heldNothing:
		return
	case heldReply:
		out, _ := boundAnswer(s.body.Bytes())
		w.Header().Del("Content-Length")
		w.WriteHeader(s.status)
		_, _ = w.Write(out)
		return
	}
	msg := bounded(strings.TrimSpace(s.body.String()))
	w.Header().Set("X-Content-Type-Options", "nosniff")
	switch {
	case s.status == http.StatusBadRequest:
		status, id, e := s.payloadError(msg)
		writeRPCError(w, status, id, e)
	case s.status >= 500:
		tenant.WriteError(w, s.status, "server_error", "the MCP server could not answer; try again")
	default:
		tenant.WriteError(w, s.status, tenant.ErrorCode(s.status), vocab.ErrorDescription(s.status, msg))
	}
}

// payloadError is the JSON-RPC answer to the SDK's plain-text 400 msg.
func (s *sdkErrorWriter) payloadError(msg string) (int, json.RawMessage, rpcError) {
	switch {
	case !s.validJSON:
		return http.StatusBadRequest, nil, rpcError{Code: rpcParseError, Message: "Parse error: the request body is not JSON"}
	case s.id != nil && strings.HasPrefix(msg, sdkNotHandled):
		return http.StatusNotFound, s.id, rpcError{Code: rpcMethodNotFound,
			Message: bounded("Method not found: this server has no method " + strconv.Quote(s.method))}
	case s.id != nil && strings.Contains(msg, sdkMissingParams):
		return http.StatusBadRequest, s.id, rpcError{Code: rpcInvalidParams,
			Message: bounded("Invalid params: the method " + strconv.Quote(s.method) + " needs params")}
	}
	return http.StatusBadRequest, nil, rpcError{Code: rpcInvalidRequest, Message: "Invalid Request: " + msg}
}

// rpcError is the error member of a JSON-RPC 2.0 response (§5.1).
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

// writeRPCError writes a JSON-RPC error response answering the request
// with id, or without an id (null) when id is nil.
func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, e rpcError) {
	if id == nil {
		id = json.RawMessage("null")
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   rpcError        `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: e})
}
