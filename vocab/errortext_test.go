package vocab

import (
	"net/http"
	"testing"
)

// Error descriptions read as sentences: never "method Not Allowed",
// "not Found" or "content-Type must be ..." (a lower-cased first letter of
// a Title Case status text or of a header name).
func TestErrorDescription(t *testing.T) {
	for _, c := range []struct {
		name   string
		status int
		text   string
		want   string
	}{
		{"status text", http.StatusMethodNotAllowed, "Method Not Allowed", "method not allowed"},
		{"status text of 404", http.StatusNotFound, "Not Found", "not found"},
		{"status text of 413", http.StatusRequestEntityTooLarge, "Request Entity Too Large", "request entity too large"},
		{"empty", http.StatusNotFound, "", "not found"},
		{"header name first", http.StatusUnsupportedMediaType, "Content-Type must be 'application/json'", "Content-Type must be 'application/json'"},
		{"acronym first", http.StatusBadRequest, "JSON RPC not handled", "JSON RPC not handled"},
		{"hyphenated name first", http.StatusBadRequest, "Idempotency-Key must be a UUID", "Idempotency-Key must be a UUID"},
		{"ordinary word first", http.StatusBadRequest, "Invalid format for parameter limit: x", "invalid format for parameter limit: x"},
		{"one-letter word", http.StatusBadRequest, "A request needs a body", "a request needs a body"},
		{"status text prefix", http.StatusBadRequest, "Bad Request: Unsupported protocol version", "unsupported protocol version"},
		{"status text prefix, name after", http.StatusForbidden, "Forbidden: invalid Host header", "invalid Host header"},
		{"already a sentence", http.StatusMethodNotAllowed, "method DELETE is not allowed here", "method DELETE is not allowed here"},
		{"unknown status", 599, "Odd", "odd"},
		{"unknown status, empty", 599, "", ""},
	} {
		if got := ErrorDescription(c.status, c.text); got != c.want {
			t.Errorf("%s: ErrorDescription(%d, %q) = %q; want %q", c.name, c.status, c.text, got, c.want)
		}
	}
}
