package sandbox

import (
	"net/http"

	"github.com/paykit-dev/paykit-go/sandbox/internal/api"
)

// DefaultRequestBodyTimeout is how long a request body may take to arrive
// when Config.RequestBodyTimeout is zero.
const DefaultRequestBodyTimeout = api.DefaultRequestBodyTimeout

// ServeHTTP serves the API, the payment page, the controls, the
// dashboard and the health endpoints.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.svc.ServeHTTP(w, r) }
