package server

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/lectern/lectern/internal/brand"
	"github.com/lectern/lectern/ui"
	"github.com/lectern/lectern/vocab"
	"github.com/lectern/lectern/web"
)

// mountWeb mounts the admin area (/admin) and the account pages
// (/account): server-rendered pages on the browser session they share with
// the sign-in pages; and the account pictures (/avatars), which the
// picture claim points at. Account pictures are kept in the upload store
// (--files-url), in its platform area.
func (s *Server) mountWeb() {
	e, a := s.echo, s.app
	h, err := web.New(web.Options{
		Store: a.Store, Cache: a.Cache, Platform: a.Platform, Sessions: s.sessions,
		Revoker: s.verifier, Pictures: s.files, Logger: a.Logger, Limits: &a.Config.Limits, Brand: s.brand,
		Throttle: s.auth.Throttle(),
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
	e.Match([]string{http.MethodGet, http.MethodHead}, vocab.AvatarsPath+"/*", wh)
	// The site's brand and the language selector (issue 19).
	e.Match([]string{http.MethodGet, http.MethodHead}, brand.StylesheetPath, wh)
	e.Match([]string{http.MethodGet, http.MethodHead}, brand.IconPath, wh)
	e.Match([]string{http.MethodGet, http.MethodHead}, "/favicon.ico", wh)
	e.GET(ui.LanguagePath, wh)
}
