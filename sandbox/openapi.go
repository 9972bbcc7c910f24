package sandbox

import (
	_ "embed"
	"net/http"
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

// openapiRoutes serves the document at GET /openapi.yaml, unsigned: it is
// public reference material, and a non-Go developer reads it before they
// can sign anything.
func (s *Server) openapiRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /openapi.yaml", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/yaml")
		w.Header().Set("Cache-Control", "no-cache")
		w.Write(openapiYAML)
	})
}
