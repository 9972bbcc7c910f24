package ledger

import (
	"strings"
	"testing"

	"github.com/paykit-dev/paykit-go/internal/spec"
)

var paymentStatuses = []string{PaymentPending, PaymentProcessing, PaymentCompleted, PaymentCancelled,
	PaymentDispute, PaymentCancelledAppeal}

var paymentEvents = []PaymentEvent{Confirm, Cancel, Expire, VerifyCompleted, VerifyCancelled,
	OpenDispute, CancelDispute, ApproveDispute, RejectDispute}

// The spec's "States and transitions", every status against every event:
// the allowed moves land where the spec says and credit only on
// completion (an approved dispute with the dispute's amount), every other
// pair is refused with the endpoint's code and touches nothing.
func TestMovePayment(t *testing.T) {
	type to struct {
		status, credit string
	}
	allowed := map[PaymentEvent]map[string]to{
		Confirm:         {PaymentPending: {PaymentProcessing, "0"}},
		Cancel:          {PaymentPending: {PaymentCancelled, "0"}},
		Expire:          {PaymentPending: {PaymentCancelled, "0"}},
		VerifyCompleted: {PaymentProcessing: {PaymentCompleted, "15"}},
		VerifyCancelled: {PaymentProcessing: {PaymentCancelled, "0"}},
		OpenDispute:     {PaymentCancelled: {PaymentDispute, "0"}, PaymentCancelledAppeal: {PaymentDispute, "0"}},
		CancelDispute:   {PaymentDispute: {PaymentCancelledAppeal, "0"}},
		ApproveDispute:  {PaymentDispute: {PaymentCompleted, "12.35"}},
		RejectDispute:   {PaymentDispute: {PaymentCancelled, "0"}},
	}
	refused := map[PaymentEvent]struct {
		kind Kind
		code string
		says string
	}{
		Confirm:         {WrongState, "PAY_008", "cannot be confirmed: status is "},
		Cancel:          {WrongState, "PAY_007", "cannot be cancelled: status is "},
		Expire:          {WrongState, "", "p1 is "},
		VerifyCompleted: {WrongState, "", "p1 is "},
		VerifyCancelled: {WrongState, "", "p1 is "},
		OpenDispute:     {WrongState, "DIS_001", "only when status is CANCELLED or CANCELLED_APPEAL, not "},
		CancelDispute:   {WrongState, "DIS_003", "can be cancelled, status is "},
		ApproveDispute:  {WrongState, "", "p1 is "},
		RejectDispute:   {WrongState, "", "p1 is "},
	}
	for _, e := range paymentEvents {
		for _, from := range paymentStatuses {
			what := string(e) + " from " + from
			disputed := d("1234.56")
			p := Payment{ID: "p1", Status: from, Amount: d("1500"), Dispute: &Dispute{Amount: &disputed}, USDTRate: d("100")}
			if e != ApproveDispute {
				p.Dispute = nil
			}
			b := Balance{Available: d("10"), Frozen: d("1")}
			credited, err := MovePayment(&p, &b, e)
			if want, ok := allowed[e][from]; ok {
				if err != nil || p.Status != want.status || !credited.Equal(d(want.credit)) {
					t.Fatalf("%s: %v, status %s, credited %s; want %s, %s", what, err, p.Status, credited, want.status, want.credit)
				}
				wantBalance(t, what, b, d("10").Add(d(want.credit)).String(), "1")
				continue
			}
			r := refused[e]
			if e == OpenDispute && from == PaymentDispute {
				r.kind, r.code, r.says = Conflict, "DIS_002", "a dispute already exists"
			}
			wantErr(t, what, err, r.kind, r.code, "")
			if !strings.Contains(err.Message, r.says) || r.kind == WrongState && !strings.Contains(err.Message, from) {
				t.Fatalf("%s: message %q", what, err.Message)
			}
			if p.Status != from || !credited.IsZero() {
				t.Fatalf("%s: refused, yet status %s, credited %s", what, p.Status, credited)
			}
			wantBalance(t, what+" (refused)", b, "10", "1")
		}
	}
	// An approved dispute without an amount credits the payment's.
	p := Payment{ID: "p1", Status: PaymentDispute, Amount: d("1500"), USDTRate: d("90")}
	b := Balance{}
	if credited, err := MovePayment(&p, &b, ApproveDispute); err != nil || !credited.Equal(d("16.67")) {
		t.Fatalf("approve without an amount: %v, credited %s", err, credited)
	}
	if _, err := MovePayment(&p, &b, "refund"); err == nil || err.Kind != Invalid {
		t.Fatalf("unknown event: %v", err)
	}
}

// Every code the payment table answers is the spec's, raised by the
// endpoint the event belongs to, with the status the API gives its kind
// (400 for WrongState, 409 for Conflict).
func TestPaymentCodesAreTheSpecs(t *testing.T) {
	status := map[Kind]int{WrongState: 400, Conflict: 409}
	for _, m := range paymentMoves {
		rs := []refusal{m.refuse}
		for _, r := range m.refuseIn {
			rs = append(rs, r)
		}
		for _, r := range rs {
			if r.code == "" {
				continue
			}
			found := false
			for _, c := range spec.ErrorCodes {
				if c.Code == r.code && c.HTTPStatus == status[r.kind] {
					found = true
				}
			}
			if !found {
				t.Errorf("%s: code %s with kind %d is not a spec code of HTTP status %d", m.event, r.code, r.kind, status[r.kind])
			}
		}
	}
}

func TestOutcomeEvents(t *testing.T) {
	for _, c := range []struct {
		outcome string
		f       func(string) (PaymentEvent, *Error)
		want    PaymentEvent
	}{
		{"completed", VerifyEvent, VerifyCompleted}, {"cancelled", VerifyEvent, VerifyCancelled},
		{"approved", ReviewEvent, ApproveDispute}, {"rejected", ReviewEvent, RejectDispute},
		{"approved", VerifyEvent, ""}, {"Completed", VerifyEvent, ""}, {"completed", ReviewEvent, ""}, {"", ReviewEvent, ""},
	} {
		e, err := c.f(c.outcome)
		if c.want == "" {
			wantErr(t, c.outcome, err, Invalid, "", "outcome")
			continue
		}
		if err != nil || e != c.want {
			t.Fatalf("%s: %v %v", c.outcome, e, err)
		}
	}
}
