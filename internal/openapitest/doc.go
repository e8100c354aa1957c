// Package openapitest validates OpenAPI 3.0 documents for tests, with
// kin-openapi's loader and validator. Production code never imports it.
package openapitest
