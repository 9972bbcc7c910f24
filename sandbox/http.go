package sandbox

import (
	"net/http"

	"github.com/paykit-dev/paykit-go/sandbox/internal/api"
	"github.com/paykit-dev/paykit-go/sandbox/internal/web"
)

// DefaultRequestBodyTimeout is how long a request body may take to arrive
// when Config.RequestBodyTimeout is zero.
const DefaultRequestBodyTimeout = api.DefaultRequestBodyTimeout

// routes registers every endpoint: the merchant API and the health
// endpoints (package api, which keeps each route's body cap), the
// controls, the pages, inspection and the OpenAPI document.
func (s *Server) routes() *http.ServeMux {
	mux := http.NewServeMux()
	s.api.Routes(mux)
	s.controlRoutes(mux)
	s.loginRoutes(mux)
	web.Routes(mux, webBackend{s}) // the payment page and the dashboard at /sandbox/ui (ui.go)
	s.inspectionRoutes(mux)
	s.openapiRoutes(mux)
	return mux
}

// ServeHTTP learns the address the request reached (webhooks must not
// dial it), then hands it to the API's pipeline (package api): health
// first, the autopilot steps now due, the request counted by its route,
// an injected fault if one matches, the routes, and the request log.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.self.Learn(r) // even a probe names an address webhooks must not dial
	s.handler.ServeHTTP(w, r)
}
