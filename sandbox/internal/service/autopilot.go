package service

import (
	"time"

	"github.com/paykit-dev/paykit-go/sandbox/internal/autopilot"
	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
)

// pilotTarget is the autopilot's view of the Service: the controls a step
// calls, the clock, and the one read of the state (for resume).
type pilotTarget struct{ s *Service }

func (t pilotTarget) Now() time.Time            { return t.s.Now() }
func (t pilotTarget) PayerPaid(id string) error { return t.s.payerPaid(id) }
func (t pilotTarget) VerifyPayment(id, outcome string) error {
	_, err := t.s.VerifyPayment(id, outcome)
	return err
}

func (t pilotTarget) ReviewDispute(id, outcome string) error {
	_, err := t.s.ReviewDispute(id, outcome)
	return err
}

func (t pilotTarget) SetPayoutStatus(id, status string) error {
	_, err := t.s.SetPayoutStatus(id, status)
	return err
}

func (t pilotTarget) SetWithdrawalStatus(id, status string) error {
	_, err := t.s.SetWithdrawalStatus(id, status, "")
	return err
}

// InFlight runs fn in one section with everything in flight: the
// autopilot's ONLY direct read of the state; a persistent store answers it
// with one query per kind.
func (t pilotTarget) InFlight(fn func(now time.Time, inFlight []autopilot.InFlight)) {
	t.s.begin()
	defer t.s.commit()
	fn(t.s.nowLocked(), inFlight(t.s.tx))
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
