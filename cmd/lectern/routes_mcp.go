package main

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/lectern/lectern/discovery"
)

// mountMCP mounts the mcp routes. Until they land, the path answers 501 so
// that the metadata can already name it.
func mountMCP(e *echo.Echo, a *app) {
	e.Add(http.MethodPost, discovery.MCPPath, notImplemented)
	_ = a
}
