package main

import (
	"path/filepath"

	"github.com/labstack/echo/v4"

	"github.com/lectern/lectern/adminapi"
	"github.com/lectern/lectern/discovery"
)

// mountAdminAPI mounts the operators' API under /api/v1, its document at
// /openapi.json and uploaded files under /uploads. Uploads live on local
// disk under the data directory (the embedded default); a fleet of replicas
// needs a shared, S3-compatible adminapi.FileStore instead (see its doc).
func mountAdminAPI(e *echo.Echo, a *app) {
	h := adminapi.New(adminapi.Options{
		Store:    a.store,
		Platform: a.platform,
		Verifier: a.verifier,
		Revoker:  a.verifier,
		Cache:    a.cache,
		Files:    &adminapi.DiskFileStore{Root: filepath.Join(a.cfg.DataDir, "uploads")},
		Logger:   a.logger,
	})
	h.Register(e, discovery.OpenAPIPath)
}
