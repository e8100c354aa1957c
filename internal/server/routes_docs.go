package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/lectern/lectern/discovery"
	"github.com/lectern/lectern/mcp"
	"github.com/lectern/lectern/vocab"
)

// mountAgentDocs mounts /auth.md, /llms.txt, /pricing.md and the course
// pages /courses/<slug>.md.
func (s *Server) mountAgentDocs() {
	e, a := s.echo, s.app
	d := discovery.NewDocs(discovery.DocsOptions{Store: a.Store, MCPTools: mcp.ToolAccess(), Logger: a.Logger, Limits: &a.Config.Limits})
	methods := []string{http.MethodGet, http.MethodHead}
	e.Match(methods, vocab.AuthMDPath, echo.WrapHandler(http.HandlerFunc(d.AuthMD)))
	e.Match(methods, vocab.LLMSTxtPath, echo.WrapHandler(http.HandlerFunc(d.LLMSTxt)))
	e.Match(methods, vocab.PricingMDPath, echo.WrapHandler(http.HandlerFunc(d.PricingMD)))
	e.Match(methods, vocab.CoursesPath+"/:page", echo.WrapHandler(http.HandlerFunc(d.CourseMD)))
}
