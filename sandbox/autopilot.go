package sandbox

import (
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

// AutopilotPending returns how many autopilot steps are scheduled and not
// yet run (0 with the autopilot off): a staging check can wait for it to
// reach 0 instead of sleeping.
func (s *Server) AutopilotPending() int { return s.svc.AutopilotPending() }
