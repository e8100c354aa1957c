package main

import (
	"github.com/labstack/echo/v4"

	"github.com/lectern/lectern/adminapi"
	"github.com/lectern/lectern/vocab"
)

// mountAdminAPI mounts the operators' API under /api/v1, its document at
// /openapi.json and uploaded files under /uploads, kept in the store
// --files-url chooses (openFiles).
func mountAdminAPI(e *echo.Echo, a *app) {
	h := adminapi.New(adminapi.Options{
		Store:    a.store,
		Platform: a.platform,
		Verifier: a.verifier,
		Revoker:  a.verifier,
		Cache:    a.cache,
		Files:    a.files,
		Logger:   a.logger,
	})
	h.Register(e, vocab.OpenAPIPath)
}
