package server

import (
	"github.com/lectern/lectern/adminapi"
	"github.com/lectern/lectern/vocab"
)

// mountAdminAPI mounts the operators' API under /api/v1, its document at
// /openapi.json and uploaded files under /uploads, kept in the store
// --files-url chooses (openFiles).
func (s *Server) mountAdminAPI() {
	e, a := s.echo, s.app
	h := adminapi.New(adminapi.Options{
		Store:    a.Store,
		Platform: a.Platform,
		Verifier: s.verifier,
		Revoker:  s.verifier,
		Cache:    a.Cache,
		Files:    s.files,
		Logger:   a.Logger,
		Limits:   &a.Config.Limits,
		Brand:    s.brand,
	})
	h.Register(e, vocab.OpenAPIPath)
}
