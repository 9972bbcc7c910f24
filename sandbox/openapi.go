package sandbox

import (
	_ "embed"
)

// openapiYAML is the repository's openapi.yaml, copied next to this file
// because go:embed cannot reach the module root. TestOpenAPICopyIsCurrent
// fails when the two differ.
//
//go:embed openapi.yaml
var openapiYAML []byte

// OpenAPI returns the OpenAPI 3.1 document of the API and of the sandbox's
// controls, the bytes GET /openapi.yaml serves.
func OpenAPI() []byte { return append([]byte(nil), openapiYAML...) }
