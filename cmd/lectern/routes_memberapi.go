package main

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/lectern/lectern/discovery"
)

// mountMemberAPI mounts the memberapi routes. Until they land, the path answers 501 so
// that the metadata can already name it.
func mountMemberAPI(e *echo.Echo, a *app) {
	e.Add(http.MethodPost, discovery.MemberGraphQLPath, notImplemented)
	_ = a
}
