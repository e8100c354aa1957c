// Package adminapi is the operators' REST API under /api/v1, generated from
// its OpenAPI 3.0 document, which is also served (per site) at /openapi.json.
//
// It imports authserver/bearer and authserver/scope, never authserver itself.
package adminapi
