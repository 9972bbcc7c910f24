package sandbox

import (
	"context"
	"net/http"

	paykit "github.com/paykit-dev/paykit-go"
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
	s.api.Routes(mux)                             // the merchant API and health (package api)
	s.ctl.ControlRoutes(mux)                      // the /sandbox/ controls (controls.go's controlBackend)
	s.ctl.Guard().LoginRoutes(mux)                // the dashboard's login (package guard)
	web.Routes(mux, webBackend{s}, s.ctl.Guard()) // the payment page and the dashboard at /sandbox/ui (ui.go)
	s.ctl.InspectionRoutes(mux)
	api.OpenAPIRoutes(mux, openapiYAML)
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

// apiBackend is the Server as the merchant API's api.Backend: the API
// (package api) reads, checks and renders; each method here is one
// section of the state (begin, the rule, the store, commit) and returns
// copies. It is a type of its own so that these methods do not join the
// Server's public surface.
type apiBackend struct{ s *Server }

var _ api.Backend = apiBackend{}

// credential is how one merchant's requests are authenticated: fixed by
// the configuration, never reset or stored.
type credential struct {
	signer   paykit.Signer // Merchant.Signer, or HMACSigner(Merchant.Secret)
	unsigned bool          // Merchant.AcceptUnsigned
}

// Credential reads s.creds, fixed at Open, without the lock.
func (b apiBackend) Credential(key string) (paykit.Signer, bool, bool) {
	c, ok := b.s.creds[key]
	return c.signer, c.unsigned, ok
}

// StoreFailed is the failed commit every later request answers 503 with.
func (b apiBackend) StoreFailed() error { return b.s.storeFailed() }

// Ready is the readiness of /readyz.
func (b apiBackend) Ready(ctx context.Context) error { return b.s.ready(ctx) }

// CatchUp runs the autopilot steps now due.
func (b apiBackend) CatchUp() {
	if b.s.pilot != nil {
		b.s.pilot.RunDue(b.s.Now())
	}
}

// Served keeps the request in the request log.
func (b apiBackend) Served(r api.Served) { b.s.recordRequest(r) }
