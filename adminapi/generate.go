package adminapi

// The server types and routes are generated from the document; a test
// checks that api.gen.go is what the generator pinned in go.mod (a tool
// directive: `go tool oapi-codegen`) makes of it.
//go:generate go tool oapi-codegen -config cfg.yaml openapi.yaml
