// Package memberapi is the Member API: GraphQL over POST /member/graphql for
// the signed-in member (graph-gophers/graphql-go, schema embedded from
// schema.graphql). Handler is an http.Handler; internal/server mounts it behind
// the tenant middleware, which puts the request's site in the context.
//
// What it owns: the schema, its resolvers, the GraphQL-over-HTTP edge
// (methods, media types, body and query limits, error shapes) and the cost
// limits. Every resolver reads or changes only the signed-in member's rows
// at the request's site (storage.MemberStore takes the site and the user on
// every call; the user is the token's subject), and Viewer.schools lists the
// member's roles at every site.
//
// Scopes (spec: Member API mutations; DESIGN §5). There is no anonymous
// mode. The handler authenticates with the shared bearer verifier, then
// reads the document, and only then decides: an operation that is a
// mutation needs account:write, a query (introspection included) needs
// account:read. A token without it gets 403 insufficient_scope with
// WWW-Authenticate scope="account:write" (or "account:read") before
// anything runs, so OAuth and MCP clients can step up. Missing, malformed,
// expired, revoked and other-origin tokens get 401 invalid_token with
// resource_metadata (bearer.WriteError). Operator tokens carry neither
// account scope and get 403. Resolvers check the scope again.
//
// Errors are GraphQL-shaped, {"errors":[{"message","extensions":{"code"}}]},
// with the codes in errors.go. A request that cannot be executed (405, 415,
// 413, 400: malformed JSON, no query, syntax, validation, variables,
// operationName, limits) has no data; an executed one is 200 with data and
// field errors beside it (BAD_USER_INPUT, NOT_FOUND, INTERNAL_SERVER_ERROR),
// or 503 with Retry-After when storage is unavailable (UNAVAILABLE). Store
// errors never show their text: they are logged here, at the edge.
//
// Limits (Limits, DefaultLimits): body 64 KiB, query 16 KiB, depth 15, 10
// root fields, 1000 selections after fragment expansion, 10 connection
// fields and 500 connection nodes (first multiplied through nested
// connections), 4 resolvers at once, 10 s per request. first defaults to 20
// and must be 1..100. Connections read one page (first+1 rows, for
// hasNextPage) and, for enrolledCourses, the last watched lectures of the
// whole page with one LastWatched call.
//
// It imports authserver/bearer for token verification and authserver/scope,
// never authserver itself; no echo, gorm or go-redis.
package memberapi
