package main

import (
	"fmt"

	"github.com/labstack/echo/v4"

	"github.com/lectern/lectern/web"
)

// mountWeb mounts the admin area (/admin) and the account pages
// (/account): server-rendered pages on the authorization server's browser
// session.
func mountWeb(e *echo.Echo, a *app) {
	h, err := web.New(web.Options{
		Store: a.store, Cache: a.cache, Platform: a.platform, Sessions: a.sessions,
		Revoker: a.verifier, Logger: a.logger,
	})
	if err != nil {
		// The templates are embedded and every test run parses them: this
		// is a defect of the build, not of the environment.
		panic(fmt.Sprintf("web pages: %v", err))
	}
	wh := echo.WrapHandler(h)
	for _, path := range []string{"/admin", "/admin/*", "/account", "/account/*"} {
		e.Any(path, wh)
	}
}
