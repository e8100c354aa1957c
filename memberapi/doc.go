// Package memberapi is the Member API: GraphQL over POST /member/graphql for
// the signed-in member (graph-gophers/graphql-go, schema embedded).
//
// It imports authserver/bearer for token verification and authserver/scope,
// never authserver itself.
package memberapi
