package server

import (
	"context"

	"github.com/labstack/echo/v4"

	"github.com/lectern/lectern/internal/platform"
	"github.com/lectern/lectern/limits"
	"github.com/lectern/lectern/mcp"
	"github.com/lectern/lectern/storage/sqlstore"
	"github.com/lectern/lectern/tenant"
	"github.com/lectern/lectern/vocab"
)

// mountMCP mounts /mcp, each site's MCP server (Streamable HTTP, stateless).
// POST carries JSON-RPC; a plain GET or HEAD describes the endpoint, an
// event-stream GET is 405 (no sessions); OPTIONS names the methods. These are
// mcp.Methods: echo answers every other method 405 with the same Allow
// list, which it builds from the methods routed here.
func (s *Server) mountMCP() {
	e, a := s.echo, s.app
	h := mcp.New(mcp.Options{Store: cachedRoles{a.Store, a.Platform}, Auth: s.verifier, Logger: a.Logger})
	budgeted := withBudget(limits.NewBudgets(&a.Config.Limits, limits.MCPRequestsPerSite), "MCP", h)
	e.Match(mcp.Methods, vocab.MCPPath, echo.WrapHandler(budgeted))
}

// cachedRoles is the store with the roles read through the platform's
// cache: /mcp checks the caller's role on every request, and role changes
// made through the platform reach it at once.
type cachedRoles struct {
	*sqlstore.Store
	p *platform.Platform
}

func (c cachedRoles) RolesAt(ctx context.Context, site tenant.ID, userID string) ([]string, error) {
	return c.p.RolesAt(ctx, site, userID)
}
