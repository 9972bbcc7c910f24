package sandbox

import (
	"github.com/paykit-dev/paykit-go/sandbox/internal/autopilot"
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

// TestValuesMarkdown renders TestValues as a Markdown table, the form the
// README carries.
func TestValuesMarkdown() string { return autopilot.TestValuesMarkdown() }
