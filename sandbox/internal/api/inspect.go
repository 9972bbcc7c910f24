package api

import "net/http"

// InspectionRoutes registers the read-only JSON views: the same guard as
// the controls (loopback Host unless remote control is allowed, the
// control token when one is set), no Content-Type needed for a GET.
func (c *ControlServer) InspectionRoutes(mux *http.ServeMux) {
	view := func(pattern string, v func() any) {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			if !c.g.Admit(w, r, false) {
				return
			}
			WriteJSON(w, http.StatusOK, v())
		})
	}
	mux.HandleFunc("GET /sandbox/requests", func(w http.ResponseWriter, r *http.Request) {
		if !c.g.Admit(w, r, false) {
			return
		}
		if f := r.URL.Query().Get("follow"); f != "" && f != "0" && f != "false" {
			if c.requests == nil {
				WriteError(w, NewError(http.StatusNotFound, CodeControlNotFound, "this sandbox does not follow its request log"))
				return
			}
			followRequests(w, r, c.requests)
			return
		}
		WriteJSON(w, http.StatusOK, map[string]any{"requests": c.b.Requests()})
	})
	view("GET /sandbox/webhooks", func() any { return map[string]any{"deliveries": c.b.Deliveries()} })
	view("GET /sandbox/state", func() any { return c.b.State() })
}
