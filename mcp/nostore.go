package mcp

import "net/http"

// noStoreWriter makes the answer it writes carry Cache-Control: no-store,
// whatever was set before: the go-sdk sets "no-cache, no-transform" on its
// answers (for event streams), which lets a cache store a response (RFC
// 9111 §5.2.2.4); answers of /mcp carry members' and operators' data, as
// userinfo and the Member API do, which send no-store (§5.2.2.5).
type noStoreWriter struct {
	http.ResponseWriter
	wrote bool
}

func (n *noStoreWriter) WriteHeader(code int) {
	if !n.wrote {
		n.wrote = true
		n.Header().Set("Cache-Control", "no-store")
	}
	n.ResponseWriter.WriteHeader(code)
}

func (n *noStoreWriter) Write(p []byte) (int, error) {
	if !n.wrote {
		n.WriteHeader(http.StatusOK)
	}
	return n.ResponseWriter.Write(p)
}

// Flush sends the header first, as net/http would, and with no-store.
func (n *noStoreWriter) Flush() {
	if !n.wrote {
		n.WriteHeader(http.StatusOK)
	}
	if f, ok := n.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (n *noStoreWriter) Unwrap() http.ResponseWriter { return n.ResponseWriter }
