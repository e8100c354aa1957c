package mcp

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/lectern/lectern/authserver/scope"
	"github.com/lectern/lectern/tenant"
	"github.com/lectern/lectern/vocab"
)

// serveInfo answers a plain GET of /mcp (a person or an agent following the
// link in /llms.txt, not an MCP client, which POSTs or asks for an event
// stream): what the endpoint is and how to use it, as Markdown.
func serveInfo(w http.ResponseWriter, site *tenant.Site) {
	var b strings.Builder
	line := func(parts ...string) {
		for _, p := range parts {
			b.WriteString(p)
		}
		b.WriteByte('\n')
	}
	name := strings.NewReplacer("\n", " ", "\r", " ").Replace(site.Name)
	line("# ", name, ": MCP server")
	line()
	line("This is the Model Context Protocol endpoint of ", name, " (", site.Origin, "). ",
		"Connect an MCP client to ", site.URL(vocab.MCPPath), " with the Streamable HTTP transport: ",
		"POST JSON-RPC messages with `Content-Type: application/json` and `Accept: application/json, text/event-stream`. ",
		"The server is stateless; there is no session to keep.")
	line()
	line("| Tool | Needs |")
	line("|---|---|")
	for _, t := range registry {
		need := "nothing (public)"
		if len(t.scopes) > 0 {
			need = "`" + scope.Join(t.scopes) + "`"
		}
		line("| `", t.name, "` | ", need, " |")
	}
	line()
	line("Tools that need a scope take an OAuth 2.0 access token of this site in `Authorization: Bearer`. ",
		"How to get one: ", site.URL(vocab.AuthMDPath), ".")
	body := b.String()
	hdr := w.Header()
	hdr.Set("Content-Type", "text/markdown; charset=utf-8")
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	hdr.Set("Cache-Control", "public, max-age=300")
	_, _ = w.Write([]byte(body))
}
