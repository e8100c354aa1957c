package main

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/lectern/lectern/discovery"
)

// mountAgentDocs mounts /auth.md, /llms.txt, /pricing.md and the course
// pages. Until they land, they answer 501.
func mountAgentDocs(e *echo.Echo, a *app) {
	for _, p := range []string{discovery.AuthMDPath, discovery.LLMSTxtPath, discovery.PricingMDPath} {
		e.Add(http.MethodGet, p, notImplemented)
	}
	_ = a
}
