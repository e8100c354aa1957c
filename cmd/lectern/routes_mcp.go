package main

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/lectern/lectern/discovery"
	"github.com/lectern/lectern/mcp"
)

// mountMCP mounts /mcp, each site's MCP server (Streamable HTTP, stateless).
// POST carries JSON-RPC; GET answers an event-stream request with 405 (no
// sessions) and a plain GET with a description of the endpoint; DELETE is
// 405. All of them pass the Origin check and authentication first.
func mountMCP(e *echo.Echo, a *app) {
	h := mcp.New(mcp.Options{Store: a.store, Auth: a.verifier, Logger: a.logger})
	e.Match([]string{http.MethodGet, http.MethodPost, http.MethodDelete}, discovery.MCPPath, echo.WrapHandler(h))
}
