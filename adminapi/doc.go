// Package adminapi is the operators' REST API under /api/v1, generated from
// its OpenAPI 3.0 document, which is also served (per site) at /openapi.json.
//
// It imports authserver/bearer and authserver/scope, never authserver itself;
// besides them it may import internal/platform, storage and tenant, and echo
// (the generated server is an echo one).
//
// # Spec first
//
// openapi.yaml is the source. `go generate ./adminapi/` runs oapi-codegen
// (cfg.yaml: echo server, strict handlers, models) into api.gen.go, which is
// committed; TestGeneratedCodeIsCurrent regenerates it and compares.
// *Handler implements the generated StrictServerInterface, one method per
// operationId. The guard reads each operation's scopes from the document
// itself, so the `security` a reader sees is the check that runs; a route
// the document does not name is 404. /openapi.json is the same document
// with the site's server URL, authorization and token URLs and every
// operator scope, cached per site (bounded) with an ETag.
//
// The document is precise enough for a generic client: every constraint a
// handler enforces is in the schemas (required sets, oneOf of required
// sets for "exactly one of", formats, patterns, bounds, enums), every JSON
// request body and every error answer has an example, and a precondition
// on a path parameter's resource is stated with x-create-with.
// integration/openapi_generic_test.go drives every operation from the
// served document alone; `make lint` runs Redocly's linter on it
// (redocly.yaml).
//
// # Decisions
//
//   - Access (guard.go), in order: the site's bearer token (401
//     invalid_token from the shared verifier, also for tokens of other
//     sites); the operation's scope (403 insufficient_scope with
//     WWW-Authenticate naming it); then the caller's roles at the site,
//     read on every request (RolesAt), which must allow the scope
//     (scope.RoleMayGrant: owners and admins every operator scope,
//     lecturers the lecturer ones). A person whose role was removed is
//     refused at once with the token they hold (403, problem type
//     urn:lectern:problem:role-required). Member tokens carry only
//     account:* and identity scopes, so they get 403 insufficient_scope.
//   - Members: only owners grant the owner role or change an owner's roles
//     (admins get 403); the last owner cannot stop being one (409). Role
//     changes go through the platform (GrantRole, RevokeRole), which clears
//     the person's cached roles and claims. The guard itself reads roles
//     from the store, not from that cache, so no change made elsewhere is
//     ever trusted late.
//   - Errors are RFC 9457 problem documents (application/problem+json) with
//     errors[] naming fields: 400 for malformed requests (JSON, parameters,
//     cursor, limit, periods), 415 for a body of an undeclared media type,
//     422 for invalid fields (and for ids in a body that are not the site's:
//     they are fields), 404 for path ids that are not the site's, 409 for
//     taken slugs or codes and for deleting what is in use (a course with
//     enrollments, an event with registrations, a product someone bought, a
//     plan with subscriptions, a section with lectures, the logo file).
//     401/403 token errors keep RFC 6750's JSON and challenge.
//   - Idempotency (idempotency.go): a POST with Idempotency-Key is run once
//     per key, per site and per person (the key is hashed with the token's
//     subject, so answers carrying an application's secret are replayed to
//     their author only). The cache keeps the request's hash and the answer
//     for 24 hours: a retry with the same request gets the same answer and
//     Idempotent-Replayed: true; the same key with another request is 422;
//     a retry while the first runs is 409. 5xx answers are not kept.
//   - Pages: limit 1-100 (default 20; more is 400, not a clamp), opaque
//     cursors (base64url of a versioned position: the last ID for keyset
//     lists, an offset for lists ordered by e-mail), nextCursor null on the
//     last page, totalCount.
//   - OAuth applications (member clients, through internal/platform) need
//     school:write, reads included (they are the school's configuration),
//     and the site's "MCP connections" beta; while it is off they answer 404
//     (problem type urn:lectern:problem:feature-disabled), as the admin area
//     hides the page. Deleting one revokes its grants first.
//   - Files (storage:write): multipart part "file", PNG, JPEG, GIF, WebP or
//     PDF, declared and sniffed types must agree (415 otherwise; SVG is
//     refused), at most DefaultMaxUploadBytes, 10 MiB (413). The server's
//     global 1 MiB body limit skips this one route, whose body is capped
//     at UploadBodyLimit instead. Files are served publicly at
//     /uploads/{key} (160-bit random keys) with nosniff and a sandboxing
//     CSP. The bytes live in a FileStore:
//     DiskFileStore under the data directory (one replica), or
//     s3files.Store, an S3-compatible bucket every replica shares
//     (--files-url).
//   - Every write records an audit event (actor: the token's subject,
//     action like "course.created", target like "course:12").
package adminapi
