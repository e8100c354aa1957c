package openapitest

import (
	"context"
	"fmt"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// Validate loads data (YAML or JSON) and validates it as an OpenAPI 3.0.x
// document, examples included.
func Validate(data []byte) error {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(data)
	if err != nil {
		return fmt.Errorf("load: %w", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.0.") {
		return fmt.Errorf("openapi is %q; want 3.0.x", doc.OpenAPI)
	}
	if err := doc.Validate(context.Background(), openapi3.EnableExamplesValidation()); err != nil {
		return fmt.Errorf("validate: %w", err)
	}
	return nil
}
