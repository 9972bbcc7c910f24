package ledger

import (
	"fmt"

	"github.com/shopspring/decimal"

	"github.com/paykit-dev/paykit-go/internal/spec"
)

// Payment statuses, upper case as the spec writes them.
const (
	PaymentPending         = "PENDING"
	PaymentProcessing      = "PROCESSING"
	PaymentCompleted       = "COMPLETED"
	PaymentCancelled       = "CANCELLED"
	PaymentDispute         = "DISPUTE"
	PaymentCancelledAppeal = "CANCELLED_APPEAL"
)

// PaymentEvent names what asks a payment to change: a merchant's call, the
// payer, the clock, or the service's side that the sandbox plays.
type PaymentEvent string

// The events of the spec's "States and transitions".
const (
	Confirm         PaymentEvent = "confirm"          // POST /v1/payments/{id}/confirm, the payer page
	Cancel          PaymentEvent = "cancel"           // POST /v1/payments/{id}/cancel
	Expire          PaymentEvent = "expire"           // valid_until passed while PENDING
	VerifyCompleted PaymentEvent = "verify completed" // the transfer was found
	VerifyCancelled PaymentEvent = "verify cancelled" // the transfer was not found
	OpenDispute     PaymentEvent = "open dispute"     // POST /v1/payments/{id}/dispute
	CancelDispute   PaymentEvent = "cancel dispute"   // POST /v1/payments/{id}/dispute/cancel
	ApproveDispute  PaymentEvent = "review approved"  // the review found the payment
	RejectDispute   PaymentEvent = "review rejected"  // the review did not
)

// refusal is a guard's answer when the payment's status is not one the
// move starts from: its kind, its code and its message (a format taking
// the payment's id and status).
type refusal struct {
	kind   Kind
	code   string
	format string
}

// paymentMove is one row of the payment state machine: from which statuses
// an event moves a payment, to which, whether it credits the terminal, and
// how it is refused otherwise (by status, or the default).
type paymentMove struct {
	event  PaymentEvent
	from   []string
	to     string
	credit bool
	refuse refusal
	// refuseIn refuses particular statuses differently from refuse (a
	// second dispute is DIS_002, a conflict, not DIS_001).
	refuseIn map[string]refusal
}

// paymentMoves is every change of a payment's status there is, with its
// guard: the API handlers, the payer page, the expiry, the Go and HTTP
// controls, the dashboard and the autopilot all move a payment through
// MovePayment, hence along these rows. A code is the spec's error of the
// endpoint; the controls' rows have none (the spec has no controls).
var paymentMoves = []paymentMove{
	{event: Confirm, from: []string{PaymentPending}, to: PaymentProcessing,
		refuse: refusal{WrongState, spec.CodePAY008, "payment cannot be confirmed: status is %[2]s"}},
	{event: Cancel, from: []string{PaymentPending}, to: PaymentCancelled,
		refuse: refusal{WrongState, spec.CodePAY007, "payment cannot be cancelled: status is %[2]s"}},
	{event: Expire, from: []string{PaymentPending}, to: PaymentCancelled,
		refuse: refusal{WrongState, "", "payment %[1]s is %[2]s, not PENDING: nothing to expire"}},
	{event: VerifyCompleted, from: []string{PaymentProcessing}, to: PaymentCompleted, credit: true,
		refuse: refusal{WrongState, "", "payment %[1]s is %[2]s, not PROCESSING"}},
	{event: VerifyCancelled, from: []string{PaymentProcessing}, to: PaymentCancelled,
		refuse: refusal{WrongState, "", "payment %[1]s is %[2]s, not PROCESSING"}},
	{event: OpenDispute, from: []string{PaymentCancelled, PaymentCancelledAppeal}, to: PaymentDispute,
		refuse:   refusal{WrongState, spec.CodeDIS001, "a dispute can be opened only when status is CANCELLED or CANCELLED_APPEAL, not %[2]s"},
		refuseIn: map[string]refusal{PaymentDispute: {Conflict, spec.CodeDIS002, "a dispute already exists for this payment"}}},
	{event: CancelDispute, from: []string{PaymentDispute}, to: PaymentCancelledAppeal,
		refuse: refusal{WrongState, spec.CodeDIS003, "only a dispute in status DISPUTE can be cancelled, status is %[2]s"}},
	{event: ApproveDispute, from: []string{PaymentDispute}, to: PaymentCompleted, credit: true,
		refuse: refusal{WrongState, "", "payment %[1]s is %[2]s, not DISPUTE"}},
	{event: RejectDispute, from: []string{PaymentDispute}, to: PaymentCancelled,
		refuse: refusal{WrongState, "", "payment %[1]s is %[2]s, not DISPUTE"}},
}

// USDTFor converts RUB to USDT at rate, rounded half up to cents.
func USDTFor(rub, rate decimal.Decimal) decimal.Decimal { return rub.DivRound(rate, 2) }

func paymentMoveOf(e PaymentEvent) *paymentMove {
	for i := range paymentMoves {
		if paymentMoves[i].event == e {
			return &paymentMoves[i]
		}
	}
	return nil
}

// CheckPayment says whether event may move a payment of the given id and
// status, and the refusal if not, without changing anything.
func CheckPayment(id, status string, e PaymentEvent) *Error {
	m := paymentMoveOf(e)
	if m == nil {
		return &Error{Kind: Invalid, Message: fmt.Sprintf("unknown payment event %q", e)}
	}
	for _, f := range m.from {
		if f == status {
			return nil
		}
	}
	r := m.refuse
	if x, ok := m.refuseIn[status]; ok {
		r = x
	}
	return &Error{Kind: r.kind, Code: r.code, Message: fmt.Sprintf(r.format, id, status)}
}

// MovePayment applies event to p: the one place a payment's status
// changes. A completion credits b (the payment's terminal) with the
// payment's amount, or an approved dispute's amount when one was given, at
// the payment's rate; it returns what it credited. A refusal touches
// neither p nor b.
func MovePayment(p *Payment, b *Balance, e PaymentEvent) (decimal.Decimal, *Error) {
	if err := CheckPayment(p.ID, p.Status, e); err != nil {
		return decimal.Zero, err
	}
	m := paymentMoveOf(e)
	credited := decimal.Zero
	if m.credit {
		rub := p.Amount
		if e == ApproveDispute && p.Dispute != nil && p.Dispute.Amount != nil {
			rub = *p.Dispute.Amount
		}
		credited = USDTFor(rub, p.USDTRate)
		b.Available = b.Available.Add(credited)
	}
	p.Status = m.to
	return credited, nil
}

// Outcomes of the verification and of a dispute's review, as the controls
// name them.
const (
	OutcomeCompleted = "completed"
	OutcomeCancelled = "cancelled"
	OutcomeApproved  = "approved"
	OutcomeRejected  = "rejected"
)

// VerifyEvent is the event of a verification outcome ("completed" or
// "cancelled"), Invalid for any other.
func VerifyEvent(outcome string) (PaymentEvent, *Error) {
	switch outcome {
	case OutcomeCompleted:
		return VerifyCompleted, nil
	case OutcomeCancelled:
		return VerifyCancelled, nil
	}
	return "", &Error{Kind: Invalid, Field: "outcome",
		Message: fmt.Sprintf("outcome must be %q or %q", OutcomeCompleted, OutcomeCancelled)}
}

// ReviewEvent is the event of a dispute review's outcome ("approved" or
// "rejected"), Invalid for any other.
func ReviewEvent(outcome string) (PaymentEvent, *Error) {
	switch outcome {
	case OutcomeApproved:
		return ApproveDispute, nil
	case OutcomeRejected:
		return RejectDispute, nil
	}
	return "", &Error{Kind: Invalid, Field: "outcome",
		Message: fmt.Sprintf("outcome must be %q or %q", OutcomeApproved, OutcomeRejected)}
}
