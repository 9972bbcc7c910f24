package sandbox

import (
	"time"

	"github.com/paykit-dev/paykit-go/sandbox/internal/autopilot"
)

// Autopilot moves resources along by themselves, the way the service
// would, so that a staging backend needs no one to press buttons: a
// confirmed payment is verified, an opened dispute is reviewed, a payout
// goes pending -> processing -> a final status, a withdrawal completes with
// a generated tx_hash. Which outcome each one reaches is chosen by the test
// values in TestValues. Delays are measured on the sandbox clock, so a test
// with an injected Config.Now drives the autopilot with Advance and never
// sleeps. A zero delay means its documented default.
//
// The expiry of unpaid payments at valid_until is not the autopilot's: it
// happens with or without it.
type Autopilot = autopilot.Config

// Default autopilot delays, short enough for a staging test to wait for
// and long enough for a person watching the dashboard to see each status.
const (
	DefaultPayerDelay      = autopilot.DefaultPayerDelay
	DefaultVerifyDelay     = autopilot.DefaultVerifyDelay
	DefaultReviewDelay     = autopilot.DefaultReviewDelay
	DefaultPayoutDelay     = autopilot.DefaultPayoutDelay
	DefaultWithdrawalDelay = autopilot.DefaultWithdrawalDelay
)

// newPilot is the Server's autopilot (internal/autopilot), which
// schedules the steps and acts only through pilotTarget, the Server's own
// controls. It is nil when the autopilot is off: a nil *autopilot.Pilot's
// every method is a no-op, so the state machine calls its hooks without
// asking.
func newPilot(s *Server, cfg Autopilot, realClock bool) *autopilot.Pilot {
	return autopilot.New(pilotTarget{s}, cfg, realClock)
}

// pilotTarget is the autopilot's view of the Server: the controls a step
// calls, the clock, and the one read of the state (for resume).
type pilotTarget struct{ s *Server }

func (t pilotTarget) Now() time.Time                          { return t.s.Now() }
func (t pilotTarget) PayerPaid(id string) error               { return t.s.payerPaid(id) }
func (t pilotTarget) VerifyPayment(id, outcome string) error  { return t.s.VerifyPayment(id, outcome) }
func (t pilotTarget) ReviewDispute(id, outcome string) error  { return t.s.ReviewDispute(id, outcome) }
func (t pilotTarget) SetPayoutStatus(id, status string) error { return t.s.SetPayoutStatus(id, status) }
func (t pilotTarget) SetWithdrawalStatus(id, status string) error {
	return t.s.SetWithdrawalStatus(id, status, "")
}

// InFlight runs fn in one section with everything in flight: the
// autopilot's ONLY direct read of the state; a persistent store answers it
// with one query per kind.
func (t pilotTarget) InFlight(fn func(now time.Time, inFlight []autopilot.InFlight)) {
	t.s.begin()
	defer t.s.commit()
	fn(t.s.nowLocked(), t.s.st.inFlight())
}

// AutopilotPending returns how many autopilot steps are scheduled and not
// yet run (0 with the autopilot off): a staging check can wait for it to
// reach 0 instead of sleeping.
func (s *Server) AutopilotPending() int { return s.pilot.Pending() }

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
	if po.Status == PayoutPending || po.Status == PayoutProcessing {
		out = append(out, autopilot.InFlight{Kind: "payout", ID: po.ID, Status: po.Status, Detail: po.Requisites})
	}
	return out
}

func appendInFlightWithdrawal(out []autopilot.InFlight, w *withdrawal) []autopilot.InFlight {
	if w.Status == WithdrawalPending || w.Status == WithdrawalProcessing {
		out = append(out, autopilot.InFlight{Kind: "withdrawal", ID: w.ID, Status: w.Status, Detail: w.Address})
	}
	return out
}
