package api

import (
	"context"
	"net/http"
	"time"
)

// Health endpoints for orchestrators (a container's HEALTHCHECK, a
// Kubernetes probe, a compose depends_on). They answer without
// authentication and without the Host check of the controls, since a probe
// comes from outside with any Host, and they reveal nothing but "up" or
// "ready". They bypass faults and the request log so that a probe every
// few seconds neither trips an injected fault nor pushes real requests out
// of the log.
const (
	// HealthzPath answers 200 {"status":"ok"} whenever the process serves.
	HealthzPath = "/healthz"
	// ReadyzPath answers 200 {"status":"ready"} when the sandbox can serve
	// requests (its storage usable), else 503 {"status":"unavailable"}.
	ReadyzPath = "/readyz"
)

// readyTimeout bounds a readiness check, so a stuck storage answers 503
// instead of hanging the probe.
const readyTimeout = 2 * time.Second

// healthRoutes registers the endpoints on the mux too, though the
// Pipeline answers them before the mux: so the router and openapi.yaml
// list the same operations.
func (a *API) healthRoutes(mux *http.ServeMux) {
	h := http.HandlerFunc(a.serveHealth)
	mux.Handle("GET "+HealthzPath, h)
	mux.Handle("GET "+ReadyzPath, h)
}

// serveHealth answers a request for HealthzPath or ReadyzPath.
func (a *API) serveHealth(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		WriteJSON(w, http.StatusMethodNotAllowed, map[string]string{"status": "method not allowed"})
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	if r.URL.Path == HealthzPath {
		WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
	defer cancel()
	if err := a.b.Ready(ctx); err != nil {
		// The reason goes to the log, not to an unauthenticated caller.
		if a.cfg.Logger != nil {
			a.cfg.Logger.Warn("readiness check failed", "error", err.Error())
		}
		WriteJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable"})
		return
	}
	WriteJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}
