package main

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/lectern/lectern/discovery"
)

// mountAdminAPI mounts /openapi.json and the admin API under /api/v1.
// Until they land, /openapi.json answers 501.
func mountAdminAPI(e *echo.Echo, a *app) {
	e.Add(http.MethodGet, discovery.OpenAPIPath, notImplemented)
	_ = a
}
