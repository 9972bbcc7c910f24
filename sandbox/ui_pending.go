package sandbox

import "net/http"

// Stand-ins until branch sandbox lands its delivery log and control guard;
// this file is deleted by the merge of that branch.

func (s *Server) guardControl(w http.ResponseWriter, r *http.Request, requireJSON bool) bool {
	return true
}

func (s *Server) uiDeliveries() []uiDelivery { return nil }
