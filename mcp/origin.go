package mcp

import (
	"strings"

	"github.com/lectern/lectern/tenant"
)

// originAllowed implements the Streamable HTTP transport's DNS rebinding
// defence (MCP spec, Transports, Security warning: servers MUST validate the
// Origin header): a request without an Origin header (MCP clients are not
// browsers) is allowed; one whose Origin is the site's own origin, or one
// of its alias hosts under the same scheme, is allowed; anything else (a
// foreign page, "null" from a sandboxed frame or a file, several Origin
// headers) is refused.
//
// The Host side of rebinding is handled before this: a Host that names no
// site never reaches /mcp.
func originAllowed(site *tenant.Site, values []string) bool {
	switch len(values) {
	case 0:
		return true
	case 1:
	default:
		return false
	}
	origin, err := tenant.CanonicalOrigin(values[0])
	if err != nil || strings.HasSuffix(values[0], "/") {
		return false
	}
	if origin == site.Origin {
		return true
	}
	scheme, _, _ := strings.Cut(site.Origin, "://")
	for _, alias := range site.Aliases {
		host, err := tenant.CanonicalHost(alias, scheme)
		if err == nil && origin == scheme+"://"+host {
			return true
		}
	}
	return false
}
