package adminapi

// The server types and routes are generated from the document; a test
// checks that api.gen.go is what the installed generator makes of it.
//go:generate oapi-codegen -config cfg.yaml openapi.yaml
