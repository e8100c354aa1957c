package mcp

import (
	"context"
	"log/slog"
	"strings"
	"sync"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lectern/lectern/authserver/scope"
	"github.com/lectern/lectern/tenant"
	"github.com/lectern/lectern/vocab"
)

// serverVersion is the version the servers report in serverInfo.
const serverVersion = "1.0.0"

// serverKey names a built server: the site as of its last change, and the
// tool set.
type serverKey struct {
	site    tenant.ID
	version int64
	mask    toolMask
}

// serverCache keeps built servers. A server is immutable once built (tools
// are added before it is shared) and serves any number of concurrent
// stateless requests. The cache is bounded: when full, about half of it is
// dropped (map order is random), and dropped servers are rebuilt on demand.
type serverCache struct {
	mu  sync.RWMutex
	m   map[serverKey]*gomcp.Server
	max int
}

func newServerCache(max int) *serverCache {
	return &serverCache{m: make(map[serverKey]*gomcp.Server), max: max}
}

func (c *serverCache) get(site *tenant.Site, mask toolMask, build func(*tenant.Site, toolMask) *gomcp.Server) *gomcp.Server {
	k := serverKey{site: site.ID, version: site.UpdatedAt.UnixNano(), mask: mask}
	c.mu.RLock()
	s := c.m[k]
	c.mu.RUnlock()
	if s != nil {
		return s
	}
	s = build(site, mask)
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.m[k]; old != nil {
		return old
	}
	if len(c.m) >= c.max {
		drop := len(c.m)/2 + 1
		for key := range c.m {
			if drop == 0 {
				break
			}
			delete(c.m, key)
			drop--
		}
	}
	c.m[k] = s
	return s
}

func (c *serverCache) len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.m)
}

// build makes the server of site with the tools of mask.
func (h *Handler) build(site *tenant.Site, mask toolMask) *gomcp.Server {
	cacheScope := "public"
	if mask != publicMask {
		// The tool list depends on the token.
		cacheScope = "private"
	}
	s := gomcp.NewServer(&gomcp.Implementation{
		Name:       site.Slug,
		Title:      site.Name,
		Version:    serverVersion,
		WebsiteURL: site.Origin,
	}, &gomcp.ServerOptions{
		Instructions: instructions(site, mask),
		Logger:       h.sdkLogger,
		SchemaCache:  h.schemas,
		// Tools only: no logging, and the list never changes during a
		// (stateless) request.
		Capabilities: &gomcp.ServerCapabilities{Tools: &gomcp.ToolCapabilities{}},
		SetCacheable: func(_ context.Context, _ gomcp.Request, c *gomcp.Cacheable) {
			c.CacheScope = cacheScope
		},
	})
	for i := range registry {
		if mask.has(i) {
			registry[i].add(s, h.tools)
		}
	}
	return s
}

// instructions tells a model what this server is and how to get more.
func instructions(site *tenant.Site, mask toolMask) string {
	var b strings.Builder
	b.WriteString("This is the MCP server of ")
	b.WriteString(site.Name)
	b.WriteString(" (")
	b.WriteString(site.Origin)
	b.WriteString("), a course site. The catalog tools (search_courses, get_course, list_events, get_pricing, get_site_info) ")
	b.WriteString("answer without signing in and show published items only. ")
	var member, operator bool
	for i, t := range registry {
		if !mask.has(i) {
			continue
		}
		for _, sc := range t.scopes {
			member = member || scope.IsMember(sc)
			operator = operator || scope.IsOperator(sc)
		}
	}
	switch {
	case member:
		b.WriteString("You are signed in as a member: the my_* tools show this person's own enrollments, progress, purchases and notifications. ")
	case operator:
		b.WriteString("You are signed in as an operator of the site: the operator tools your token's scopes allow are listed. ")
	default:
		b.WriteString("A member's own data (my_* tools) needs an OAuth access token with scope account:read; ")
		b.WriteString("the sign-in steps are at ")
		b.WriteString(site.URL(vocab.AuthMDPath))
		b.WriteString(". ")
	}
	b.WriteString("Lists are paged: pass next_cursor back as cursor. Prices are in minor units with a formatted copy.")
	return b.String()
}

// quietHandler passes on records at or above min: the SDK logs every
// stateless connection at INFO, which at one per request is noise.
type quietHandler struct {
	slog.Handler
	min slog.Level
}

func (q quietHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= q.min && q.Handler.Enabled(ctx, l)
}

func (q quietHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return quietHandler{q.Handler.WithAttrs(attrs), q.min}
}

func (q quietHandler) WithGroup(name string) slog.Handler {
	return quietHandler{q.Handler.WithGroup(name), q.min}
}
