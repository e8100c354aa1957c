package server

import (
	"github.com/labstack/echo/v4"

	"github.com/lectern/lectern/limits"
	"github.com/lectern/lectern/memberapi"
	"github.com/lectern/lectern/vocab"
)

// mountMemberAPI mounts the Member API (GraphQL over POST) at
// /member/graphql for every method, so that GET and the rest get the API's
// own GraphQL-shaped 405 rather than the router's.
func (s *Server) mountMemberAPI() {
	e, a := s.echo, s.app
	h, err := memberapi.New(memberapi.Options{Store: cachedRoles{a.Store, a.Platform}, Verifier: s.verifier, Logger: a.Logger,
		Budget: limits.NewBudgets(&a.Config.Limits, limits.GraphQLCostPerSite)})
	if err != nil {
		// The embedded schema does not match the resolvers: a build that
		// cannot serve the API must not start (memberapi's tests catch it).
		panic(err)
	}
	e.Any(vocab.MemberGraphQLPath, echo.WrapHandler(h))
}
