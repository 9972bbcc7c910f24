package service

import (
	"time"

	"github.com/paykit-dev/paykit-go/sandbox/internal/autopilot"
	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
)

// The Service is the autopilot's Target itself: a step calls the control
// verbs, the clock and PayerPaid, and reads the state through InFlight.

// InFlight runs fn in one section with everything in flight: the
// autopilot's ONLY direct read of the state; a persistent store answers it
// with one query per kind.
func (s *Service) InFlight(fn func(now time.Time, inFlight []autopilot.InFlight)) {
	s.begin()
	defer s.commit()
	fn(s.nowLocked(), inFlight(s.tx))
}

// AutopilotPending counts the autopilot's steps not yet run.
func (s *Service) AutopilotPending() int { return s.pilot.Pending() }

func appendInFlightPayment(out []autopilot.InFlight, pm *payment) []autopilot.InFlight {
	switch pm.Status {
	case statusPending, statusProcessing, statusDispute:
		f := autopilot.InFlight{Kind: "payment", ID: pm.ID, Status: pm.Status, Amount: pm.Amount}
		if pm.Dispute != nil {
			f.Comment = pm.Dispute.Comment
		}
		out = append(out, f)
	}
	return out
}

func appendInFlightPayout(out []autopilot.InFlight, po *payout) []autopilot.InFlight {
	if po.Status == ledger.PayoutPending || po.Status == ledger.PayoutProcessing {
		out = append(out, autopilot.InFlight{Kind: "payout", ID: po.ID, Status: po.Status, Detail: po.Requisites})
	}
	return out
}

func appendInFlightWithdrawal(out []autopilot.InFlight, w *withdrawal) []autopilot.InFlight {
	if w.Status == ledger.WithdrawalPending || w.Status == ledger.WithdrawalProcessing {
		out = append(out, autopilot.InFlight{Kind: "withdrawal", ID: w.ID, Status: w.Status, Detail: w.Address})
	}
	return out
}
