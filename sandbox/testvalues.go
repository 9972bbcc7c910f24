package sandbox

import (
	"github.com/shopspring/decimal"

	"github.com/paykit-dev/paykit-go/internal/spec"
	"github.com/paykit-dev/paykit-go/sandbox/internal/autopilot"
	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
)

// TestValue is one row of the autopilot's test values: like a payment
// provider's test card numbers, a value in a request chooses the outcome
// the autopilot gives, so a test in any language reaches every branch
// without the controls. TestValues is the single source: the package
// documentation, the README and the dashboard render it.
type TestValue = autopilot.TestValue

// TestValues lists every test value the autopilot understands. Values
// apply only with Config.Autopilot enabled (and not
// Autopilot.IgnoreTestValues); without it a request is served
// as usual whatever it carries. Any value not listed takes the default row
// of its resource.
var TestValues = autopilot.TestValues

// refuseTestAmount is the autopilot's refusal of a new payment of amount
// (Pilot.RefusesCreate: the test amount 404.04, never with the autopilot
// off), which ledger.CreatePayment asks through its Env.
func (s *Server) refuseTestAmount(amount decimal.Decimal) *ledger.Error {
	if s.pilot.RefusesCreate(amount) {
		return testAmountRefused
	}
	return nil
}

// testAmountRefused is PAY_004 for the test amount.
var testAmountRefused = &ledger.Error{Kind: ledger.Unavailable, Code: spec.CodePAY004,
	Message: "no requisites available (sandbox test amount 404.04)"}

// TestValuesMarkdown renders TestValues as a Markdown table, the form the
// README carries.
func TestValuesMarkdown() string { return autopilot.TestValuesMarkdown() }
