package autopilot

import (
	"strings"

	"github.com/shopspring/decimal"

	"github.com/paykit-dev/paykit-go/internal/spec"
	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
)

// TestValue is one row of the autopilot's test values: like a payment
// provider's test card numbers, a value in a request chooses the outcome
// the autopilot gives, so a test in any language reaches every branch
// without the controls. TestValues is the single source: the package
// documentation, the README and the dashboard render it.
type TestValue struct {
	// Resource is what the value is sent with: payment, dispute, payout
	// or withdrawal.
	Resource string
	// Field is the request field that carries the value.
	Field string
	// Value describes the values that match, for a person to read.
	Value string
	// Example is one concrete value that matches.
	Example string
	// Outcome is what the autopilot does with it.
	Outcome string
}

// TestValues lists every test value the autopilot understands. Values
// apply only with Config.Autopilot enabled (and not
// Autopilot.IgnoreTestValues); without it a request is served
// as usual whatever it carries. Any value not listed takes the default row
// of its resource.
var TestValues = []TestValue{
	{"payment", "amount", "any other kopecks", "1500.00",
		"after the merchant confirms: verified, COMPLETED, terminal credited"},
	{"payment", "amount", "kopecks .11", "1500.11",
		"the payer presses \"I paid\" by itself (PROCESSING), then verified, COMPLETED"},
	{"payment", "amount", "kopecks .12", "1500.12",
		"after the merchant confirms: transfer not found, CANCELLED"},
	{"payment", "amount", "kopecks .13", "1500.13",
		"after the merchant confirms: stays PROCESSING (never verified)"},
	{"payment", "amount", "exactly 404.04", "404.04",
		"create answers 503 " + spec.CodePAY004 + " (no requisites available)"},
	{"dispute", "comment", "any other comment, or none", "receipt attached",
		"reviewed: approved, COMPLETED, terminal credited"},
	{"dispute", "comment", "contains \"reject\" (any case)", "please reject",
		"reviewed: rejected, CANCELLED"},
	{"payout", "requisites", "any other requisites", "4111111111111111",
		"pending → processing → completed"},
	{"payout", "requisites", "ends in 0002", "4000000000000002",
		"pending → processing → failed"},
	{"payout", "requisites", "ends in 0003", "4000000000000003",
		"pending → processing → cancelled"},
	{"withdrawal", "address", "any other address", "TXYZsandboxAddress",
		"pending → processing → completed, with a generated tx_hash"},
	{"withdrawal", "address", "ends in FAIL (any case)", "TXYZsandboxFAIL",
		"pending → processing → failed, amount and fee back on the balance"},
}

// Outcomes chosen by a payment amount.
const (
	tvDefault = iota
	tvPayerConfirms
	tvNotFound
	tvStaysProcessing
)

var pay004Amount = decimal.RequireFromString("404.04")

// Kopecks is the amount's kopecks (1500.11 -> 11), or -1 when the amount
// has finer digits than kopecks, which then match no test value.
func Kopecks(amount decimal.Decimal) int64 {
	k := amount.Mul(decimal.NewFromInt(100))
	if !k.Equal(k.Truncate(0)) {
		return -1
	}
	return k.Mod(decimal.NewFromInt(100)).IntPart()
}

func (p *Pilot) paymentOutcome(amount decimal.Decimal) int {
	if p.cfg.IgnoreTestValues {
		return tvDefault
	}
	switch Kopecks(amount) {
	case 11:
		return tvPayerConfirms
	case 12:
		return tvNotFound
	case 13:
		return tvStaysProcessing
	}
	return tvDefault
}

// RefuseCreate is the ledger's creation rule (ledger.Env.Refuse): PAY_004
// for the test amount 404.04, nil for any other amount and always nil
// with the autopilot off.
func (p *Pilot) RefuseCreate(amount decimal.Decimal) *ledger.Error {
	if p != nil && !p.cfg.IgnoreTestValues && amount.Equal(pay004Amount) {
		return testAmountRefused
	}
	return nil
}

// testAmountRefused is PAY_004 for the test amount.
var testAmountRefused = &ledger.Error{Kind: ledger.Unavailable, Code: spec.CodePAY004,
	Message: "no requisites available (sandbox test amount 404.04)"}

func (p *Pilot) disputeOutcome(comment string) string {
	if !p.cfg.IgnoreTestValues && strings.Contains(strings.ToLower(comment), "reject") {
		return ledger.OutcomeRejected
	}
	return ledger.OutcomeApproved
}

func (p *Pilot) payoutOutcome(requisites string) string {
	switch {
	case p.cfg.IgnoreTestValues:
		return ledger.PayoutCompleted
	case strings.HasSuffix(requisites, "0002"):
		return ledger.PayoutFailed
	case strings.HasSuffix(requisites, "0003"):
		return ledger.PayoutCancelled
	}
	return ledger.PayoutCompleted
}

func (p *Pilot) withdrawalOutcome(address string) string {
	if !p.cfg.IgnoreTestValues && strings.HasSuffix(strings.ToUpper(address), "FAIL") {
		return ledger.WithdrawalFailed
	}
	return ledger.WithdrawalCompleted
}

// TestValuesMarkdown renders TestValues as a Markdown table, the form the
// README carries.
func TestValuesMarkdown() string {
	var b strings.Builder
	b.WriteString("| Resource | Field | Value | Example | Autopilot outcome |\n")
	b.WriteString("|---|---|---|---|---|\n")
	for _, v := range TestValues {
		b.WriteString("| " + v.Resource + " | " + v.Field + " | " + v.Value + " | `" + v.Example + "` | " + v.Outcome + " |\n")
	}
	return b.String()
}
