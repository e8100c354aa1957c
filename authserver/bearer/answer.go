package bearer

import (
	"errors"
	"net/http"
	"strings"

	"github.com/lectern/lectern/tenant"
	"github.com/lectern/lectern/vocab"
)

// retryAfter is the Retry-After of a 503, in seconds, as the tenant
// middleware answers when the site directory is down.
const retryAfter = "5"

// ResourceMetadataURL is the URL of the site's protected-resource metadata
// (RFC 9728 §3), which every 401 and 403 points at with resource_metadata
// (RFC 9728 §5.1). Only the origin-level document exists (DESIGN §8).
func ResourceMetadataURL(site *tenant.Site) string {
	return site.URL(vocab.ProtectedResourcePath)
}

// WriteError answers a request that err refuses. An *Error is written as
// its Status with an RFC 6749 §5.2-style JSON body (error,
// error_description) and Cache-Control: no-store, and:
//
//   - 401: WWW-Authenticate: Bearer resource_metadata="...",
//     error="invalid_token", error_description="..." (RFC 6750 §3,
//     RFC 9728 §5.1), which sends MCP clients to the site's metadata;
//   - 403: WWW-Authenticate: Bearer error="insufficient_scope",
//     scope="...", resource_metadata="..." (clients step up only when
//     error="insufficient_scope" is present);
//   - 503: Retry-After.
//
// Any other error is answered 503 temporarily_unavailable without detail:
// it fails closed and shows no internals. site may be nil (no
// resource_metadata then). WriteError does not log; Verify has logged the
// causes of the 503s it returned.
func WriteError(w http.ResponseWriter, site *tenant.Site, err error) {
	var e *Error
	if !errors.As(err, &e) || e == nil {
		e = TemporarilyUnavailable(err)
	}
	status, code, desc := e.Status, e.Code, e.Description
	h := w.Header()
	switch status {
	case http.StatusUnauthorized:
		var b strings.Builder
		b.WriteString("Bearer ")
		if site != nil {
			param(&b, "resource_metadata", ResourceMetadataURL(site))
			b.WriteString(", ")
		}
		param(&b, "error", code)
		if desc != "" {
			b.WriteString(", ")
			param(&b, "error_description", desc)
		}
		h.Set("WWW-Authenticate", b.String())
	case http.StatusForbidden:
		var b strings.Builder
		b.WriteString("Bearer ")
		param(&b, "error", code)
		if e.Scope != "" {
			b.WriteString(", ")
			param(&b, "scope", e.Scope)
		}
		if site != nil {
			b.WriteString(", ")
			param(&b, "resource_metadata", ResourceMetadataURL(site))
		}
		h.Set("WWW-Authenticate", b.String())
	case http.StatusNotFound:
	default:
		// 503, and any status this package does not produce: fail closed.
		if status != http.StatusServiceUnavailable {
			u := TemporarilyUnavailable(nil)
			status, code, desc = u.Status, u.Code, u.Description
		}
		h.Set("Retry-After", retryAfter)
	}
	tenant.WriteError(w, status, ascii(code), ascii(desc))
}

// param writes name="value" as an auth-param (RFC 9110 §11.2) whose
// quoted-string escapes '"' and '\' and holds printable ASCII only (RFC 6750
// §3 limits error, error_description and scope to it).
func param(b *strings.Builder, name, value string) {
	b.WriteString(name)
	b.WriteString(`="`)
	for i := 0; i < len(value); i++ {
		c := value[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c > 0x7e:
			b.WriteByte('?')
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
}

// ascii replaces bytes outside printable ASCII, so the JSON body says what
// the header says.
func ascii(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] < 0x20 || b[j] > 0x7e {
					b[j] = '?'
				}
			}
			return string(b)
		}
	}
	return s
}
