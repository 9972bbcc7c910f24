package api

import "net/http"

// OpenAPIRoutes serves doc, the OpenAPI document of the API and of the
// controls, at GET /openapi.yaml, unsigned and unguarded: it is public
// reference material, and a non-Go developer reads it before they can
// sign anything.
func OpenAPIRoutes(mux *http.ServeMux, doc []byte) {
	mux.HandleFunc("GET /openapi.yaml", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/yaml")
		w.Header().Set("Cache-Control", "no-cache")
		w.Write(doc)
	})
}
