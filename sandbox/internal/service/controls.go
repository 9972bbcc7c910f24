package service

import (
	"github.com/paykit-dev/paykit-go/sandbox/internal/api"
)

// The Service is the /sandbox/ routes' api.Controls: each route calls the
// control the Go API calls, and gets its refusal as a *ledger.Error whose
// message is the text the Go control's error has.
var _ api.Controls = (*Service)(nil)

// State is the /sandbox/state view.
func (s *Service) State() any { return s.StateView() }

// Requests is the /sandbox/requests view.
func (s *Service) Requests() any { return s.RequestLog() }

// Deliveries is the /sandbox/webhooks view.
func (s *Service) Deliveries() any { return s.DeliveryLog() }
