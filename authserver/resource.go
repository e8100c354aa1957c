package authserver

import (
	"github.com/lectern/lectern/tenant"
)

// canonicalResource compares RFC 8707 resource values after DESIGN §5's
// normalisation: scheme and host lower-cased, default port dropped, a lone
// trailing "/" dropped (the TypeScript MCP SDK and Claude Code send
// "https://site/", the Go SDK "https://site"). A path, query or fragment is
// not a resource of ours. It returns "" for an invalid value.
func canonicalResource(raw string) string {
	c, err := tenant.CanonicalOrigin(raw)
	if err != nil {
		return ""
	}
	return c
}

// resourceMatches reports whether raw names the site's protected resource.
func resourceMatches(site *tenant.Site, raw string) bool {
	return raw != "" && canonicalResource(raw) == site.Resource()
}
